"""From the test-helper payment to the merchant's receiver getting `invoice.paid`, on the real
processes with the default intervals: gunicorn, `rq worker` and `rq cron` exactly as the Procfile
runs them, PostgreSQL and Redis, a receiver on 127.0.0.1.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/tender_bench REDIS_URL=redis://127.0.0.1:6379/6 \
        .venv/bin/python -m bench.payflow [--invoices 30]

The baseline is the bare round trip of the same path without the pipeline: a plain POST from
this process to the same receiver (what the merchant would see if Tender's work took no time).
Invoices are paid `--gap` seconds apart (they overlap in the pipeline), each timed from the pay call's
start to the arrival of its `invoice.paid` delivery. The database is emptied first.

Then Tender's own share (`--provider-changes N`, 0 to skip): N invoices get a deposit address (a
committed quote, so they are hot), and one every `--gap` seconds this process changes the
sandbox's record of its deposit so that the next status read answers `PROCESSING`, as a real
provider changes a swap's status on its own: no test helper, no nudge, Tender learns it at its
next poll. Each is timed from that change's commit to the receiver answering its `invoice.paid`.
"""
from __future__ import annotations

import argparse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import json
import os
import shlex
import statistics
import threading
import time

import requests

from bench import stack


class Arrivals:
    def __init__(self):
        self.times: dict[str, float] = {}
        self.condition = threading.Condition()

    def server(self) -> ThreadingHTTPServer:
        arrivals = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                event = json.loads(body)
                with arrivals.condition:
                    if event.get("type") == "invoice.paid":
                        arrivals.times.setdefault(event["data"]["object"]["id"], time.monotonic())
                    arrivals.condition.notify_all()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return server

    def wait(self, invoice_id: str, timeout: float) -> float:
        deadline = time.monotonic() + timeout
        with self.condition:
            while invoice_id not in self.times:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"{invoice_id}: no invoice.paid within {timeout} s")
                self.condition.wait(left)
            return self.times[invoice_id]


def procfile(name: str) -> list[str]:
    line = next(line for line in (stack.ROOT / "Procfile").read_text().splitlines() if line.startswith(f"{name}:"))
    return [str(stack.BIN / part) if part in ("rq", "gunicorn", "python") else part
            for part in shlex.split(line.split(":", 1)[1])]


def fresh_sandbox_stack(url: str, redis_url: str) -> dict:
    """Empty the Redis database and the scratch database; the processes' environment: the sandbox
    provider, private webhook targets allowed (receivers on 127.0.0.1), the default intervals."""
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    stack.reset_database(url)
    environment = stack.env(url, REDIS_URL=redis_url, ALLOW_PRIVATE_WEBHOOK_URLS="1", SWAP_PROVIDER="sandbox")
    for name in ("CHAIN_POLL_INTERVAL_SECONDS", "SETTLEMENT_POLL_INTERVAL_SECONDS", "EXPIRY_SWEEP_INTERVAL_SECONDS"):
        environment.pop(name, None)                        # the defaults
    return environment


def provider_reads(redis_url: str) -> dict:
    """The pollers' deposit status reads so far, {(phase, temperature): n}, from the counter behind
    `tender_provider_deposit_reads_total` (the processes flush it to Redis every second)."""
    import redis

    counted = redis.Redis.from_url(redis_url).hgetall("tender:metrics:provider_reads")
    return {tuple(field.decode().split("\x1f")): int(value) for field, value in counted.items()}


def read_rates(api: requests.Session, base: str, url: str, redis_url: str, *, invoices: int,
               window: float) -> dict:
    """Provider reads per open invoice per minute, over `window` seconds, for `invoices` hot ones
    (a quote committed just now, no payment) and as many idle ones (their quote 20 minutes old,
    set in the scratch database: a run cannot wait that long). Paid invoices are out of the
    chain poll by then, so every chain read in the window is one of these."""
    hot, idle = [], []
    for group in (hot, idle):
        for _ in range(invoices):
            invoice_id = api.post(f"{base}/v1/invoices", json={"amount": "10.00", "currency": "USD"},
                                  timeout=10).json()["id"]
            api.post(f"{base}/v1/public/invoices/{invoice_id}/quote",
                     json={"origin_asset": "xlm", "refund_to": "GBUYER", "dry": False}, timeout=10).raise_for_status()
            group.append(invoice_id)
    stack.sql(url, "UPDATE invoice SET quoted_at = quoted_at - interval '20 minutes' WHERE public_id = ANY(%s)", idle)
    stack.sql(url, "UPDATE poll_state SET next_poll_at = now() FROM invoice "
                   "WHERE invoice.id = poll_state.invoice_id AND invoice.public_id = ANY(%s)", idle)
    before = provider_reads(redis_url)
    time.sleep(window)                                     # the measuring window itself, not a wait for work
    after = provider_reads(redis_url)
    per_minute = 60 / window / invoices
    return {temperature: (after.get(("chain", temperature), 0) - before.get(("chain", temperature), 0)) * per_minute
            for temperature in ("hot", "idle")}


def provider_changes(api: requests.Session, base: str, url: str, arrivals: "Arrivals", *, invoices: int,
                     gap: float) -> list[float]:
    """Seconds from the provider's status change to the receiver's answer, per invoice."""
    ids = []
    for _ in range(invoices):
        invoice_id = api.post(f"{base}/v1/invoices", json={"amount": "10.00", "currency": "USD"}, timeout=10).json()["id"]
        api.post(f"{base}/v1/public/invoices/{invoice_id}/quote",
                 json={"origin_asset": "xlm", "refund_to": "GBUYER", "dry": False}, timeout=10).raise_for_status()
        ids.append(invoice_id)
    changed = {}
    for invoice_id in ids:
        # The deposit as the sandbox holds it one read before PROCESSING (docs/payment-engine.md#the-sandbox).
        stack.sql(url, "UPDATE sandbox_deposit d SET outcome = 'success', deposited_amount = d.amount_in, polls = 1, "
                       "deposited_at = now() AT TIME ZONE 'utc', origin_tx_hash = md5(random()::text), "
                       "destination_tx_hash = md5(random()::text), refund_tx_hash = md5(random()::text) "
                       "FROM invoice i WHERE i.deposit_address = d.deposit_address AND i.public_id = %s", invoice_id)
        changed[invoice_id] = time.monotonic()
        time.sleep(gap)                                    # pacing, as for the payments
    return [arrivals.wait(invoice_id, timeout=90) - changed[invoice_id] for invoice_id in ids]


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--invoices", type=int, default=30)
    parser.add_argument("--gap", type=float, default=0.5)
    parser.add_argument("--provider-changes", type=int, default=30,
                        help="invoices timed from the provider's status change to the receiver (0: skip)")
    parser.add_argument("--read-window", type=float, default=60,
                        help="seconds over which provider reads per open invoice are counted (0: skip)")
    args = parser.parse_args()
    url = stack.database_url()
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/6"
    environment = fresh_sandbox_stack(url, redis_url)
    _store, api_key = stack.create_store(url, REDIS_URL=redis_url)
    arrivals = Arrivals()
    receiver = arrivals.server()
    receiver_url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    processes = stack.Processes()
    latencies, baseline, reads, shares = [], [], {}, []
    try:
        _web, base = stack.start_gunicorn(processes, "wsgi:app", environment, workers=2, threads=4)
        processes.start("worker", procfile("worker"), environment)
        processes.start("webhooks", procfile("webhooks"), environment)
        processes.start("scheduler", procfile("scheduler"), environment)
        api = requests.Session()
        api.trust_env = False
        api.headers["Authorization"] = f"Bearer {api_key}"
        api.post(f"{base}/v1/webhook-endpoints", json={"url": receiver_url, "events": ["invoice.paid"]},
                 timeout=10).raise_for_status()
        invoices = [api.post(f"{base}/v1/invoices", json={"amount": "10.00", "currency": "USD"},
                             timeout=10).json()["id"] for _ in range(args.invoices)]
        started = {}
        for invoice_id in invoices:
            started[invoice_id] = time.monotonic()
            api.post(f"{base}/v1/test_helpers/invoices/{invoice_id}/pay", json={}, timeout=10).raise_for_status()
            time.sleep(args.gap)                           # pacing: payments spread out, not one burst
        latencies = [arrivals.wait(invoice_id, timeout=90) - started[invoice_id] for invoice_id in invoices]
        if args.provider_changes:
            shares = provider_changes(api, base, url, arrivals, invoices=args.provider_changes, gap=args.gap)
        reads = read_rates(api, base, url, redis_url, invoices=10, window=args.read_window) if args.read_window else {}
        plain = requests.Session()
        plain.trust_env = False
        body = json.dumps({"type": "baseline", "data": {"object": {"id": "x"}}})
        for _ in range(args.invoices):
            began = time.monotonic()
            plain.post(receiver_url, data=body, headers={"Content-Type": "application/json"}, timeout=10)
            baseline.append(time.monotonic() - began)
    finally:
        processes.stop_all()
        receiver.shutdown()
    ms = [value * 1000 for value in latencies]
    print(f"{args.invoices} invoices paid {args.gap} s apart (default intervals: chain poll 10 s, hot invoices 2 s, outbox relay 5 s)")
    print(f"  pay -> invoice.paid received: p50 {statistics.median(ms):7.1f} ms  p99 {percentile(ms, 0.99):7.1f} ms  "
          f"max {max(ms):7.1f} ms")
    if shares:
        own = [value * 1000 for value in shares]
        print(f"  provider status change -> receiver's 200 ({len(own)} invoices): p50 {statistics.median(own):7.1f} ms  "
              f"p99 {percentile(own, 0.99):7.1f} ms  max {max(own):7.1f} ms")
    raw = [value * 1000 for value in baseline]
    print(f"  bare POST to the same receiver: p50 {statistics.median(raw):7.2f} ms  p99 {percentile(raw, 0.99):7.2f} ms")
    print(f"  ratio p50 {statistics.median(ms) / statistics.median(raw):.0f}x the bare POST")
    if reads:
        print(f"  provider reads per open invoice per minute over {args.read_window:.0f} s: "
              f"hot {reads['hot']:.1f}, idle {reads['idle']:.1f}")


if __name__ == "__main__":
    main()
