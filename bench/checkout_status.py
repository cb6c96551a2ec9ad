"""How long a move takes to show on an open checkout page (goal: within 2 s), in Chromium.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/tender_bench .venv/bin/python -m bench.checkout_status

For each of `--samples` invoices: the checkout page is opened (Debian's /usr/bin/chromium, headless),
then, at a random moment of the page's poll cycle, the merchant cancels the invoice through the API
(a real move: compare-and-set and event row, committed when the answer arrives). The lag is from
that answer to the page showing "This invoice was cancelled". The baseline, measured in the same
run, is one fetch of the page's status route from the page: what the page would pay if the server
could tell it at once. The database is emptied first: use a scratch one.
"""
from __future__ import annotations

import random
import statistics
import time

import requests

from bench import int_options, stack

def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def measure(base: str, api_key: str, samples: int) -> tuple[list[float], list[float]]:
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

    auth = {"Authorization": f"Bearer {api_key}"}
    lags, fetches = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            for _ in range(samples):
                invoice = requests.post(f"{base}/v1/invoices", json={"amount": "10.00"}, headers=auth,
                                        timeout=10).json()
                page = browser.new_page()
                page.goto(f"{base}/checkout/{invoice['id']}")
                page.locator("#asset:enabled").wait_for()
                fetches.append(page.evaluate("""async (url) => {
                    const start = performance.now(); await (await fetch(url)).json();
                    return performance.now() - start; }""", f"/v1/public/invoices/{invoice['id']}") / 1000)
                time.sleep(random.uniform(0, 3))              # anywhere in the page's poll cycle
                cancelled = requests.post(f"{base}/v1/invoices/{invoice['id']}/cancel", headers=auth, timeout=10)
                moved_at = time.monotonic()
                assert cancelled.status_code == 200, cancelled.text
                page.locator("[data-panel=cancelled]").wait_for(state="visible", timeout=30_000)
                lags.append(time.monotonic() - moved_at)
                page.close()
        finally:
            browser.close()
    return lags, fetches


def main() -> None:
    args = int_options(samples=20)
    url = stack.database_url()
    stack.reset_database(url)
    _store_id, api_key = stack.create_store(url)
    processes = stack.Processes()
    try:
        _web, base = stack.start_gunicorn(processes, "wsgi:app", stack.env(url, SWAP_PROVIDER="sandbox"),
                                          workers=2, threads=4)
        load = open("/proc/loadavg").read().split()[0]
        lags, fetches = measure(base, api_key, args.samples)
    finally:
        processes.stop_all()
    print(f"checkout page: move -> shown, {len(lags)} samples, load average {load}")
    print(f"  lag      p50 {statistics.median(lags):.2f} s   p95 {_percentile(lags, .95):.2f} s   "
          f"max {max(lags):.2f} s   (goal: max <= 2 s)")
    print(f"  baseline one status fetch from the page: p50 {statistics.median(fetches) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
