"""Debian's Chromium, headless, driven by Playwright: shared by the browser tests (tests/browser/)
and the WooCommerce plugin's end-to-end test. Playwright's own browser download is never used."""
from contextlib import contextmanager

CHROMIUM = "/usr/bin/chromium"
# Headless and quiet: nothing but 127.0.0.1 is ever contacted (no updates, sync, QUIC probes).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


@contextmanager
def launched():
    """A running headless Chromium (a Playwright Browser), closed afterwards."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()
