"""Finished invoices cost a polling tick nothing: N finished invoices beside M open ones, one tick.

    DATABASE_URL=postgresql://… REDIS_URL=redis://…/N .venv/bin/python -m bench.polling_window \\
        [--finished 10000] [--open 100]

Without DATABASE_URL it runs on a temporary SQLite file and fakeredis. The finished invoices are
every way an invoice ends (settled, refunded, failed, expired or cancelled past deadline + 24 h,
underpaid and held past that window); half of them still have a stale poll state (due long ago,
past its watch window), as rows written before polling ended would. One `poll_deposits` + one `poll_settlements` tick must read
exactly the M open invoices; it prints the reads and the tick's time beside a tick over the M
open invoices alone (same run). It writes to the database it is given: use a scratch one.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
import time

from bench import int_options
from bench.polls import _setup

ENDINGS = [("paid", None), ("refunded", None), ("failed", None), ("expired", None), ("cancelled", None),
           ("underpaid", None), ("paid", "processing")]


def _add_finished(count: int) -> None:
    from models.base import db
    from models.invoices import Invoice
    from models.polls import PollState
    from models.stores import Store
    from core import ids
    from core.clock import utcnow

    now = utcnow()
    store = Store.select().first()
    long_ago = now - dt.timedelta(days=3)
    with db.connection_context():
        for start in range(0, count, 1000):
            batch = range(start, min(start + 1000, count))
            invoice_ids = {i: ids.new_uuid() for i in batch}
            with db.atomic():
                Invoice.insert_many([dict(
                    id=invoice_ids[i], public_id=ids.new_public_id("inv_"), store=store.id,
                    status=ENDINGS[i % len(ENDINGS)][0], swap_status=ENDINGS[i % len(ENDINGS)][1],
                    amount=Decimal("10"), currency="USD", order_amount=Decimal("10"), order_currency="USD",
                    output_asset="usdc.near", origin_asset="usdc.eth", deposit_address=f"done{i}",
                    quoted_at=long_ago, deposit_seen_at=long_ago, expires_at=long_ago, created_at=long_ago,
                    updated_at=long_ago) for i in batch]).execute()
                PollState.insert_many([dict(
                    id=invoice_ids[i], invoice=invoice_ids[i], phase="settlement" if ENDINGS[i % len(ENDINGS)][1] else "chain",
                    next_poll_at=long_ago, watch_until=long_ago + dt.timedelta(hours=24))
                    for i in batch if i % 2]).execute()


def _tick() -> tuple[int, float]:
    from jobs import chain, settlement

    started = time.perf_counter()
    reads = chain.poll_deposits() + settlement.poll_settlements()
    return reads, time.perf_counter() - started


def _reopen() -> None:
    from models.base import db
    from models.polls import PollState
    from core.clock import utcnow

    with db.connection_context():
        PollState.update(next_poll_at=utcnow() - dt.timedelta(seconds=1)).execute()


def main() -> None:
    args = int_options(finished=10000, open=100)
    settings = _setup(args.open)
    baseline_reads, baseline = _tick()             # the open invoices alone
    _add_finished(args.finished)
    _reopen()
    reads, seconds = _tick()
    backend = "postgresql" if "postgres" in settings.database_url else "sqlite"
    print(f"backend: {backend}; {args.finished} finished + {args.open} open invoices")
    print(f"tick over the open invoices alone: {baseline_reads} provider reads, {baseline * 1000:.1f} ms")
    print(f"tick beside the finished ones:     {reads} provider reads, {seconds * 1000:.1f} ms")
    print(f"ratio (beside / alone) = {seconds / baseline:.2f}")
    if reads != args.open:
        raise SystemExit(f"a tick read {reads} invoices, not the {args.open} open ones")


if __name__ == "__main__":
    main()
