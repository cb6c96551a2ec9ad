"""Webhook delivery benchmark: not a test, a ratio against a bare baseline in the same run.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/tender_bench_webhooks \
        .venv/bin/python -m bench.webhooks [--deliveries 2000] [--rounds 4]

1. fan-out: one event to 16 endpoints, end to end (fan-out job + one delivery run), repeated;
   beside a raw `requests` loop posting the same 16 bodies per event.
2. sustained: N due deliveries sent by delivery runs (one worker: claim batches, a thread pool,
   record attempts), beside a raw `requests` loop posting the same N bodies one after another.
Each measure alternates ours and the raw loop, round by round (`--rounds`), and compares the
summed times, so a change of load on a shared machine weighs on both alike. The receiver runs
in its own process (tests/support/receiver.py). Goals: fan-out >= 0.5, sustained >= 0.6 x raw.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
import os
import subprocess
import sys
import tempfile
import time

import requests

from bench import int_options, stack
from config import load_settings


def start_receiver():
    process = subprocess.Popen([sys.executable, "-m", "tests.support.receiver"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    return process, int(process.stdout.readline())


def setup(database_url: str, **environment):
    settings = load_settings({"DATABASE_URL": database_url, "ALLOW_PRIVATE_WEBHOOK_URLS": "1", "LOG_LEVEL": "WARNING",
                               "SWAP_PROVIDER": "sandbox", **environment})
    if database_url.startswith("postgres"):
        from tests.conftest import _create_postgres_database

        _create_postgres_database(database_url)
    from bootstrap import init_runtime
    from cli import migrate

    init_runtime(settings)
    migrate()
    return settings


def make_events(store, count: int) -> list:
    from models.base import db
    from core import ids
    from services.engine import invoice_states
    from core.clock import utcnow

    events = []
    now = utcnow()
    with db.connection_context():
        for _ in range(count):
            invoice = invoice_states.create(
                now=now, id=ids.new_uuid(), public_id=ids.new_public_id("inv_"), store=store.id,
                amount=Decimal("10.00"), currency="USD", order_amount=Decimal("10.00"), order_currency="USD",
                output_asset="usdc.near", external_order_id="bench", expires_at=now + dt.timedelta(hours=1))
            events.append(invoice.events.get().id)
    return events


def raw_loop(urls_and_bodies) -> float:
    """The bare baseline: one Session, one POST after another, same bodies, same receiver."""
    session = requests.Session()
    session.trust_env = False
    began = time.perf_counter()
    for url, body in urls_and_bodies:
        response = session.post(url, data=body, headers={"Content-Type": "application/json"}, timeout=10)
        response.raise_for_status()
    return time.perf_counter() - began


def main():
    args = int_options(deliveries=2000, fanout_events=40, concurrency=32, rounds=4)
    database_url = os.environ.get("DATABASE_URL") or f"sqlite:///{tempfile.mkdtemp()}/bench.db"
    setup(database_url)

    from models.base import db
    from models.events import Event
    from models.webhooks import WebhookDelivery, WebhookEndpoint
    from services.accounts import stores
    from services.webhooks import endpoints, outbox, webhook_delivery, webhook_sending
    from services.webhooks.delivery_policy import DeliveryPolicy
    from core.clock import utcnow

    receiver, port = start_receiver()
    policy = DeliveryPolicy((60,), 10, 60, args.concurrency, True)
    try:
        with db.connection_context():
            store = stores.create_store(name="bench", payout_wallet="bench.near", now=utcnow())
            for number in range(16):
                endpoints.create_endpoint(store, {"url": f"http://127.0.0.1:{port}/e{number}", "events": ["*"]},
                                         now=utcnow(), allow_private=True)
            urls = [e.url for e in WebhookEndpoint.select().order_by(WebhookEndpoint.created_at)]

        # 1. fan-out of one event to 16 endpoints, end to end, alternating with the raw loop.
        per_round = max(1, args.fanout_events // args.rounds)
        ours = raw = 0.0
        fanned = 0
        for _ in range(args.rounds):
            events = make_events(store, per_round)
            with db.connection_context():
                bodies = [webhook_sending.render_body(Event.get_by_id(e).payload) for e in events]
                # One event at a time, as the nudged fan-out job meets them: the others are hidden as
                # dispatched until their turn (that UPDATE is counted against ours).
                Event.update(dispatched_at=utcnow()).where(Event.id.in_(events)).execute()
                began = time.perf_counter()
                for event_id in events:
                    Event.update(dispatched_at=None).where(Event.id == event_id).execute()
                    webhook_delivery.fan_out_and_deliver(policy)
                ours += time.perf_counter() - began
            raw += raw_loop([(url, body) for body in bodies for url in urls])
            fanned += len(events)
        with db.connection_context():
            assert WebhookDelivery.select().where(WebhookDelivery.status == "succeeded").count() == 16 * fanned
        fan_ours, fan_raw = fanned / ours, fanned / raw
        print(f"fan-out 1 event -> 16 endpoints, {fanned} events in {args.rounds} alternated rounds: ours "
              f"{fan_ours:.1f} events/s ({fan_ours * 16:.0f} deliveries/s, {1000 / fan_ours:.1f} ms/event); raw loop "
              f"{fan_raw:.1f} events/s; ratio {fan_ours / fan_raw:.2f} (goal >= 0.50); load {stack.load()}", flush=True)

        # 2. sustained deliveries per second of delivery runs, alternating with the raw loop.
        ours = raw = 0.0
        sent = 0
        for _ in range(args.rounds):
            events = make_events(store, max(1, args.deliveries // 16 // args.rounds))
            with db.connection_context():
                for event_id in events:
                    outbox.fan_out(event_id, now=utcnow())
                due = WebhookDelivery.select().where(WebhookDelivery.status == "pending").count()
                bodies = [webhook_sending.render_body(Event.get_by_id(e).payload) for e in events]
                began = time.perf_counter()
                counts = webhook_delivery.deliver_due(policy, max_seconds=600)
                ours += time.perf_counter() - began
            assert counts.succeeded == due, counts
            raw += raw_loop([(url, body) for body in bodies for url in urls])
            sent += due
        rate_ours, rate_raw = sent / ours, sent / raw
        print(f"sustained, {sent} deliveries in {args.rounds} alternated rounds, concurrency {args.concurrency}: "
              f"ours {rate_ours:.0f}/s; raw loop {rate_raw:.0f}/s; ratio {rate_ours / rate_raw:.2f} (goal >= 0.60); "
              f"load {stack.load()}", flush=True)
        print(f"backend: {'PostgreSQL' if database_url.startswith('postgres') else 'SQLite'}")
    finally:
        receiver.stdin.close()
        receiver.wait(10)


if __name__ == "__main__":
    main()
