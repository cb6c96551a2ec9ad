"""Polls per second of one worker against the sandbox, beside an empty RQ job loop (same run).

    DATABASE_URL=postgresql://… REDIS_URL=redis://…/N .venv/bin/python -m bench.polls [--invoices 10000]

Without DATABASE_URL/REDIS_URL it runs on a temporary SQLite file and fakeredis. It creates N open
invoices with sandbox deposit addresses, already polled once and still without a deposit (the
steady state of open invoices: every poll is a provider read and a reschedule), quoted two hours
ago so that none is due twice within the run, then:
  1. empty loop: J no-op jobs through a SimpleWorker, and through a fork-per-job Worker;
  2. polling: `jobs.chain.poll_deposits` jobs through one SimpleWorker until every invoice has been
     polled once (the sandbox answers each claimed batch with one SELECT); with `--memory-provider
     1`, `poll_due` called in this process instead, with a provider that answers from memory (no
     sandbox read) one deposit at a time, as 1Click is asked: each poll then takes a thread and a
     pooled connection.
It prints the figures and the ratio, and on PostgreSQL the write-ahead log the polling wrote per
poll (`pg_current_wal_lsn()` before and after; other writers to the same server count too: run
it on a quiet one, or read it as an upper bound). It writes to the database it is given: use a
scratch one.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
import os
import tempfile
import time

from rq import SimpleWorker, Worker

from bench import int_options


def _setup(invoice_count: int):
    if not os.environ.get("DATABASE_URL"):
        os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/bench.db"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("SWAP_PROVIDER", "sandbox")
    import jobs
    from cli import migrate
    from models.base import db, is_postgres
    from models.invoices import Invoice
    from models.polls import PollState
    from models.sandbox import SandboxDeposit
    from services.engine.poll_state import WATCH_AFTER_DEADLINE
    from core import ids
    from services.accounts import stores
    from core.clock import utcnow

    settings = jobs.ensure_runtime()
    with db.connection_context():
        if is_postgres():
            db.execute_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
        migrate()
        now = utcnow()
        store = stores.create_store(name="Bench", payout_wallet="bench.near", now=now)
        expires = now + dt.timedelta(hours=1)
        # Quoted two hours ago and due since: each is polled once in the run, and its next poll
        # (the 12x back-off of an old unpaid invoice) falls after the run, so every poll counted
        # is a first one.
        now -= dt.timedelta(hours=2)
        for start in range(0, invoice_count, 1000):
            batch = range(start, min(start + 1000, invoice_count))
            addresses = [f"0x{index:040x}" for index in batch]
            invoice_ids = [ids.new_uuid() for _ in batch]
            with db.atomic():
                SandboxDeposit.insert_many([dict(
                    deposit_address=a, correlation_id=a[-16:], origin_asset="usdc.eth", destination_asset="usdc.near",
                    amount_in=Decimal("10.05"), amount_out=Decimal("10"), recipient="bench.near", refund_to="0xb",
                    deadline=expires, created_at=now) for a in addresses]).execute()
                Invoice.insert_many([dict(
                    id=i, public_id=ids.new_public_id("inv_"), store=store.id, status="awaiting_payment",
                    amount=Decimal("10"), currency="USD", order_amount=Decimal("10"), order_currency="USD",
                    output_asset="usdc.near", origin_asset="usdc.eth", refund_to="0xb", amount_due=Decimal("10.05"),
                    deposit_address=a, quoted_at=now, provider_status="PENDING_DEPOSIT",
                    expires_at=expires, created_at=now,
                    updated_at=now) for i, a in zip(invoice_ids, addresses)]).execute()
                PollState.insert_many([dict(id=i, invoice=i, phase="chain", next_poll_at=now,
                                            watch_until=expires + WATCH_AFTER_DEADLINE)
                                       for i in invoice_ids]).execute()
    return settings


def _emptied(queue, connection):
    connection.delete(queue.key)      # not queue.empty(): a Lua script, which fakeredis cannot run
    return queue


def _empty_loop(worker_class, connection, count: int) -> float:
    from infra import queues

    queue = _emptied(queues.queue("bench"), connection)
    with connection.pipeline() as pipe:
        for _ in range(count):
            queue.enqueue("bench.noop.noop", result_ttl=0, pipeline=pipe)
        pipe.execute()
    worker = worker_class([queue], connection=connection)
    started = time.perf_counter()
    worker.work(burst=True, logging_level="WARNING")
    return count / (time.perf_counter() - started)


def _wal_position():
    """The server's write-ahead log position (PostgreSQL), or None."""
    from models.base import db, is_postgres

    if not is_postgres():
        return None
    with db.connection_context():
        # From a checkpoint: the first write to each page after one logs the whole page, so both
        # sides of a comparison start alike.
        db.execute_sql("CHECKPOINT")
        return db.execute_sql("SELECT pg_current_wal_lsn()").fetchone()[0]


def _wal_bytes_since(position) -> int | None:
    from models.base import db

    if position is None:
        return None
    with db.connection_context():
        return int(db.execute_sql("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)", (position,)).fetchone()[0])


class _PendingFromMemory:
    """A provider that answers at once that no deposit came, without a database read of its own."""

    def deposit_status(self, deposit_address, deposit_memo=None, **_):
        from providers import base
        from providers.base import DepositStatus

        return DepositStatus(status=base.PENDING_DEPOSIT, correlation_id=deposit_address[-16:])


def _poll_in_process(settings) -> None:
    from core.clock import utcnow
    from models.base import db
    from services.engine import polling

    with db.connection_context():        # one run, as one job would; the caller counts what is left
        polling.poll_due("chain", _PendingFromMemory(), clock=utcnow, base_seconds=settings.chain_poll_interval_seconds,
                         batch_size=settings.poll_batch_size, concurrency=settings.poll_concurrency,
                         hot_seconds=settings.hot_poll_interval_seconds, time_budget=20)


def _polling(connection, settings=None) -> tuple[int, float, int | None]:
    from models.base import db
    from models.invoices import Invoice
    from models.polls import PollState

    from infra import queues

    queue = _emptied(queues.queue("chain"), connection)
    worker = SimpleWorker([queue], connection=connection)
    not_yet = PollState.select().join(Invoice).where(PollState.next_poll_at <= Invoice.quoted_at)
    wal = _wal_position()
    started = time.perf_counter()
    while True:
        with db.connection_context():
            left = not_yet.count()
        if not left:
            break
        if settings is not None:
            _poll_in_process(settings)
            continue
        queue.enqueue("jobs.chain.poll_deposits", result_ttl=0, job_timeout=600)
        worker.work(burst=True, logging_level="WARNING")
    elapsed = time.perf_counter() - started
    wal_bytes = _wal_bytes_since(wal)
    with db.connection_context():
        polled = PollState.select().join(Invoice).where(PollState.next_poll_at > Invoice.quoted_at).count()
    return polled, polled / elapsed, wal_bytes


def main() -> None:
    args = int_options(invoices=10000, empty_jobs=300, memory_provider=0)
    settings = _setup(args.invoices)
    from infra import queues

    connection = queues.redis()
    simple = _empty_loop(SimpleWorker, connection, args.empty_jobs)
    forking = _empty_loop(Worker, connection, max(args.empty_jobs // 3, 50))
    polled, polls_per_second, wal_bytes = _polling(connection, settings if args.memory_provider else None)
    backend = "postgresql" if "postgres" in settings.database_url else "sqlite"
    redis_kind = "fakeredis" if settings.embedded_redis else "redis"
    print(f"backend: {backend} + {redis_kind}; batch {settings.poll_batch_size}, "
          f"concurrency {settings.poll_concurrency}, sandbox latency {settings.sandbox_latency_ms} ms")
    print(f"empty RQ jobs/s, SimpleWorker:       {simple:8.1f}")
    print(f"empty RQ jobs/s, fork-per-job Worker: {forking:8.1f}")
    how = "in process, provider answering from memory" if args.memory_provider else "one SimpleWorker"
    print(f"polls/s, {how} ({polled} invoices): {polls_per_second:8.1f}")
    print(f"ratio polls/s : empty SimpleWorker jobs/s = {polls_per_second / simple:.1f}x")
    if wal_bytes is not None:
        print(f"WAL bytes per poll: {wal_bytes / max(polled, 1):8.0f} ({wal_bytes} bytes over {polled} polls)")


if __name__ == "__main__":
    main()
