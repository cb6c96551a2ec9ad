"""One hostile endpoint against everyone else (docs/performance.md, "Tenant isolation"): the real
processes exactly as the Procfile runs them (gunicorn, `worker`, `webhooks`, `scheduler`) on
PostgreSQL and Redis, with the default intervals.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/tender_bench REDIS_URL=redis://127.0.0.1:6379/6 \\
        .venv/bin/python -m bench.tenant_isolation [--payments 10]

Store A's endpoint answers one byte every 0.5 s (never finishing) and has a backlog of 50 events;
store B then creates and pays `--payments` sandbox invoices one after the other. Measured: the
time from B's sandbox payment to `paid` (payment work), and from B's create to the arrival of its
`invoice.created` delivery (another tenant's webhooks). The baseline is the same run in the same
invocation with A's endpoint answering at once.
"""
from __future__ import annotations

import os
import statistics
import time

import requests

from bench import int_options, stack
from bench.payflow import fresh_sandbox_stack, percentile, procfile
from tests.support.polling import wait_for
from tests.support.receiver import Receiver

BACKLOG = 50


def run(url: str, redis_url: str, *, trickle: bool, payments: int) -> dict:
    environment = fresh_sandbox_stack(url, redis_url)
    _a, key_a = stack.create_store(url, REDIS_URL=redis_url)
    _b, key_b = stack.create_store(url, REDIS_URL=redis_url)
    hostile, other = Receiver(), Receiver()
    if trickle:
        hostile.trickle("/a", every=0.5)
    processes = stack.Processes()
    paid_after, delivered_after = [], []
    with hostile, other:
        try:
            _web, base = stack.start_gunicorn(processes, "wsgi:app", environment, workers=1, threads=4)
            for name in ("worker", "webhooks", "scheduler"):
                processes.start(name, procfile(name), environment)
            a, b = _session(key_a), _session(key_b)
            a.post(f"{base}/v1/webhook-endpoints", json={"url": hostile.url("/a"), "events": ["*"]}).raise_for_status()
            b.post(f"{base}/v1/webhook-endpoints", json={"url": other.url("/b"), "events": ["*"]}).raise_for_status()
            for number in range(BACKLOG):
                a.post(f"{base}/v1/invoices", json={"amount": "10.00", "external_order_id": f"a-{number}"}
                       ).raise_for_status()
            if trickle:
                hostile.wait_for(4, path="/a", timeout=30)     # A's endpoint holds its attempts
            for number in range(payments):
                created_at = time.monotonic()
                invoice = b.post(f"{base}/v1/invoices", json={"amount": "10.00"}).json()["id"]
                paid_at = time.monotonic()
                b.post(f"{base}/v1/test_helpers/invoices/{invoice}/pay", json={}).raise_for_status()
                seen: dict[str, float] = {}

                def both_seen():
                    if "delivered" not in seen and _arrived(other, invoice):
                        seen["delivered"] = time.monotonic()
                    if "paid" not in seen and b.get(f"{base}/v1/invoices/{invoice}/status").json()["status"] == "paid":
                        seen["paid"] = time.monotonic()
                    return len(seen) == 2

                wait_for(both_seen, timeout=300, interval=0.02, what="B's delivery and payment")
                delivered_after.append(seen["delivered"] - created_at)
                paid_after.append(seen["paid"] - paid_at)
        finally:
            hostile.stopping.set()
            processes.stop_all()
    return {"paid": paid_after, "delivered": delivered_after, "hostile_attempts": len(hostile.to("/a"))}


def _session(key: str) -> requests.Session:
    session = requests.Session()
    session.trust_env = False
    session.headers["Authorization"] = f"Bearer {key}"
    return session


def _arrived(receiver: Receiver, invoice_id: str) -> bool:
    needle = f'"id":"{invoice_id}"'.encode()
    return any(b'"invoice.created"' in r.body and needle in r.body for r in receiver.to("/b"))


def _line(label: str, seconds: list[float]) -> str:
    return (f"{label}: p50 {statistics.median(seconds):6.2f} s  p90 {percentile(seconds, 0.9):6.2f} s  "
            f"max {max(seconds):6.2f} s")


def main() -> None:
    args = int_options(payments=10)
    url = stack.database_url("tender_bench")
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/6"
    results = {trickle: run(url, redis_url, trickle=trickle, payments=args.payments) for trickle in (False, True)}
    print(f"store B: {args.payments} sandbox invoices, one after the other; store A: {BACKLOG}-event backlog")
    for trickle, label in ((False, "A answers at once"), (True, "A trickles 1 byte / 0.5 s")):
        result = results[trickle]
        print(f"  {label} (A's attempts seen: {result['hostile_attempts']})")
        print("    " + _line("B pay -> paid             ", result["paid"]))
        print("    " + _line("B create -> its delivery  ", result["delivered"]))


if __name__ == "__main__":
    main()
