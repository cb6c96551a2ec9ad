"""A process that takes a claim, starts its work and holds it until told to finish or killed: what a
web or worker process is to its claims when its host is lost mid-request (tests/infra/test_takeover.py).

    python -m tests.support.claim_holder idempotency STORE_ID KEY HEARTBEAT_SECONDS
    python -m tests.support.claim_holder poll LEASE_SECONDS HEARTBEAT_SECONDS
    python -m tests.support.claim_holder deliver LEASE_SECONDS HEARTBEAT_SECONDS

`idempotency` runs `infra.idempotency.run` for KEY, whose work creates an invoice and then waits
for a line on stdin before returning; it prints `holding` once the work has begun, and `done
STATUS` or `refused CODE` at the end. `poll` runs one chain poll (`services.engine.polling`) with
LEASE_SECONDS, whose provider prints `holding` when asked about the claimed invoices and answers
(each deposit PROCESSING) after a line on stdin; it prints `polled N` at the end. `deliver` runs
a webhooks fan-out run (`services.webhooks.webhook_delivery`) whose claims last LEASE_SECONDS
while renewed; it holds them as long as the receiver makes its attempts wait.
HEARTBEAT_SECONDS 0 stops its heartbeats (a holder alive but silent).
The database and Redis are the environment's (DATABASE_URL, REDIS_URL)."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
import os
import sys


def new_invoice(store, now: dt.datetime):
    """An invoice of the store, created as the API creates one (its row and its event)."""
    from core import ids
    from services.engine import invoice_states

    return invoice_states.create(now=now, id=ids.new_uuid(), public_id=ids.new_public_id("inv_"), store=store.id,
                                 amount=Decimal("10.00"), currency="USD", order_amount=Decimal("10.00"),
                                 order_currency="USD", output_asset=store.output_asset,
                                 expires_at=now + dt.timedelta(hours=1))


def hold_idempotency_key(store_id: str, key: str) -> None:
    from core.clock import utcnow
    from core.errors import Conflict
    from infra import idempotency
    from models.base import db
    from models.stores import Store

    def work():
        invoice = new_invoice(store, utcnow())
        print("holding", flush=True)
        sys.stdin.readline()
        return 201, {"id": invoice.public_id}

    with db.connection_context():
        store = Store.get_by_id(store_id)
        try:
            outcome = idempotency.run(store, key, idempotency.fingerprint("POST /test", {}), work, now=utcnow())
        except Conflict as refusal:
            print(f"refused {refusal.code}", flush=True)
            return
    print(f"done {outcome.status}", flush=True)


PROCESSING = dict(status="PROCESSING", correlation_id="corr", amount_in=Decimal("10.05"),
                  amount_in_usd=Decimal("10.05"), origin_tx_hashes=("0xorigin",))


class PaidProvider:
    """Every deposit asked about has been paid (10.05); `before_answering` runs first."""

    def __init__(self, before_answering=lambda: None):
        self.before_answering = before_answering

    def deposit_statuses(self, deposits):
        from providers.base import DepositStatus

        self.before_answering()
        return [DepositStatus(**PROCESSING) for _deposit in deposits]


def poll_once(provider, *, lease_seconds: float) -> int:
    from core.clock import utcnow
    from models.base import db
    from services.engine import polling

    with db.connection_context():
        return polling.poll_due("chain", provider, clock=utcnow, base_seconds=10, hot_seconds=2, batch_size=10,
                                concurrency=1, lease_seconds=lease_seconds)


def hold_poll(lease_seconds: str) -> None:
    def hold():
        print("holding", flush=True)
        sys.stdin.readline()

    print(f"polled {poll_once(PaidProvider(hold), lease_seconds=float(lease_seconds))}", flush=True)


def hold_deliveries(lease_seconds: str) -> None:
    from config import load_settings
    from models.base import db
    from services.webhooks import delivery_policy, webhook_delivery

    delivery_policy.RENEWED_CLAIM_SECONDS = float(lease_seconds)
    policy = delivery_policy.DeliveryPolicy.from_settings(load_settings(os.environ))
    with db.connection_context():
        _created, counts = webhook_delivery.fan_out_and_deliver(policy)
    print(f"delivered {counts.succeeded}", flush=True)


def main(argv: list[str]) -> None:
    from bootstrap import init_runtime
    from config import load_settings
    from infra import heartbeats

    mode, *args = argv
    init_runtime(load_settings(os.environ))
    beat_seconds = float(args[-1])
    heartbeats.INTERVAL_SECONDS = beat_seconds if beat_seconds > 0 else 3600.0
    if mode == "idempotency":
        hold_idempotency_key(*args[:2])
    elif mode == "poll":
        hold_poll(args[0])
    elif mode == "deliver":
        hold_deliveries(args[0])
    else:
        raise SystemExit(f"claim_holder: unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])
