"""Delivery claims against a growing backlog: not a test, a ratio measured in one run.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/tender_bench_claims \
        .venv/bin/python -m bench.delivery_claims [--backlogs 500,5000,50000] [--claims 30]

One store's backlog (a replay: every delivery due at the same moment) spread over its 16
endpoints, and another store's 16 deliveries of one new event. At each backlog size, a delivery
run's claim (up to 32, within the caps: services/webhooks/delivery_claim.py) is timed `--claims` times, each in a
transaction rolled back so every claim meets the same rows; the median is reported. The bare
baseline is the same claim with the smallest backlog: the ratio says how much a claim slows as
the backlog grows (goal <= 1.5 from the smallest to the largest backlog), and every claim must take
as many of the other store's deliveries as its cap allows, at every size (fairness).

Then `--waiting-targets` more stores, each with one legacy-callback retry due an hour from now (as
a failing receiver's would be), and the claim timed again beside them, with only the other store's
16 due and with the whole backlog due: a claim ranks every due delivery while they are few and
walks the targets with pending deliveries beyond that (services/webhooks/delivery_claim.py). The first must stay within
the goal; the second, thousands of waiting targets beside a big backlog, is the known limit
(docs/performance.md), reported without one.
"""
from __future__ import annotations

import argparse
import datetime as dt
import statistics
import time

from bench import stack

STORES_OTHER_ENDPOINTS = 16


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backlogs", default="500,5000,50000")
    parser.add_argument("--claims", type=int, default=30)
    parser.add_argument("--waiting-targets", default="1000,5000")
    return parser.parse_args()


def main():
    args = options()
    database_url = stack.database_url("tender_bench_claims")
    from bench.webhooks import setup

    setup(database_url)
    from core import ids
    from core.clock import utcnow
    from models import inserts
    from models.base import db
    from models.events import Event
    from models.webhooks import WebhookDelivery, WebhookEndpoint
    from services.accounts import stores
    from services.webhooks import delivery_claim, endpoints
    from services.webhooks.delivery_policy import DeliveryPolicy

    policy = DeliveryPolicy((60,), 10, 60, 32, True)
    now = utcnow()
    with db.connection_context():
        WebhookDelivery.delete().execute()
        hostile = stores.create_store(name="backlog", payout_wallet="backlog.near", now=now)
        other = stores.create_store(name="other", payout_wallet="other.near", now=now)
        targets = {}
        for store in (hostile, other):
            for number in range(STORES_OTHER_ENDPOINTS):
                endpoints.create_endpoint(store, {"url": f"http://127.0.0.1:9/{store.id}/{number}", "events": ["*"]},
                                          now=now, allow_private=True)
            targets[store.id] = [endpoint.id for endpoint in
                                 WebhookEndpoint.select().where(WebhookEndpoint.store == store.id)]
        event = Event.create(id=ids.new_uuid(), public_id=ids.new_public_id("evt_"), store=hostile.id,
                             type="invoice.created", payload={}, created_at=now, dispatched_at=now)
        other_event = Event.create(id=ids.new_uuid(), public_id=ids.new_public_id("evt_"), store=other.id,
                                   type="invoice.created", payload={}, created_at=now, dispatched_at=now)

        def add(store_id, event_id, count, due_at):
            rows = [dict(id=ids.new_uuid(), public_id=ids.new_public_id("whd_"), store=store_id, event=event_id,
                         status="pending", attempts=0, next_attempt_at=due_at, created_at=now, updated_at=now,
                         endpoint=targets[store_id][number % STORES_OTHER_ENDPOINTS], target_key=ids.new_uuid().hex,
                         url=None) for number in range(count)]
            for start in range(0, len(rows), 1000):
                inserts.insert_rows(WebhookDelivery, rows[start:start + 1000])

        add(other.id, other_event.id, STORES_OTHER_ENDPOINTS, now)
        backlog, results = 0, []
        for size in sorted(int(size) for size in args.backlogs.split(",")):
            add(hostile.id, event.id, size - backlog, now - dt.timedelta(minutes=5))   # older than the other's
            backlog = size
            db.execute_sql("ANALYZE webhook_delivery")
            times, others = [], set()
            for number in range(args.claims):
                with db.atomic() as transaction:
                    began = time.perf_counter()
                    claimed = delivery_claim.claim_deliveries_in_transaction(
                        f"bench-{number}", policy.caps, now=utcnow(), limit=policy.concurrency)
                    times.append(time.perf_counter() - began)
                    others.add(sum(1 for row in WebhookDelivery.select(WebhookDelivery.store)
                                   .where(WebhookDelivery.claim_token == f"bench-{number}")
                                   if row.store_id == other.id))
                    transaction.rollback()
            median = statistics.median(times)
            results.append((size, median))
            print(f"backlog {size:>6}: claim of {claimed.taken} in {median * 1000:.2f} ms (median of {args.claims}); "
                  f"the other store's new deliveries taken: {sorted(others)}", flush=True)
            assert others == {policy.caps.per_store}, "a claim left the other store's new deliveries behind"
        (smallest, base), (largest, top) = results[0], results[-1]
        print(f"claim at {largest} due / at {smallest} due: ratio {top / base:.2f} (goal <= 1.5); load {stack.load()}",
              flush=True)
        waiting = 0
        for count in [int(count) for count in args.waiting_targets.split(",") if count]:
            for number in range(waiting, count):
                store = stores.create_store(name=f"waiting {number}", payout_wallet="waiting.near", now=now)
                retried = Event.create(id=ids.new_uuid(), public_id=ids.new_public_id("evt_"), store=store.id,
                                       type="invoice.created", payload={}, created_at=now, dispatched_at=now)
                inserts.insert_rows(WebhookDelivery, [dict(
                    id=ids.new_uuid(), public_id=ids.new_public_id("whd_"), store=store.id, event=retried.id,
                    status="pending", attempts=1, next_attempt_at=now + dt.timedelta(hours=1), created_at=now,
                    updated_at=now, endpoint=None, target_key="callback_url", url="http://127.0.0.1:9/callback")])
            waiting = count
            backlog_rows = WebhookDelivery.store == hostile.id
            for due, status in ((STORES_OTHER_ENDPOINTS, "succeeded"), (largest, "pending")):
                # The backlog set aside (not pending) for the first measure, back for the second.
                WebhookDelivery.update(status=status).where(backlog_rows).execute()
                db.execute_sql("VACUUM ANALYZE webhook_delivery")     # the 50,000 rows just rewritten
                times = []
                for number in range(args.claims):
                    with db.atomic() as transaction:
                        began = time.perf_counter()
                        delivery_claim.claim_deliveries_in_transaction(f"waiting-{number}", policy.caps,
                                                                       now=utcnow(), limit=policy.concurrency)
                        times.append(time.perf_counter() - began)
                        transaction.rollback()
                median = statistics.median(times)
                print(f"{due} due beside {waiting} targets whose deliveries all wait: claim in {median * 1000:.2f} ms; "
                      f"ratio to {smallest} due alone {median / base:.2f}", flush=True)


if __name__ == "__main__":
    main()
