"""Helpers for payment-engine tests: drive the pipeline with explicit clocks, read what it wrote."""
from __future__ import annotations

import datetime as dt

from core.clock import utcnow
from models.base import db
from models.events import Event
from models.invoices import Invoice
from models.polls import PollState
from models.transactions import Transaction
from providers.sandbox import SandboxProvider
from services.engine import poll_state, polling


def reload(invoice) -> Invoice:
    with db.connection_context():
        return Invoice.get_by_id(invoice.id)


def event_types(invoice) -> list[str]:
    with db.connection_context():
        return [e.type for e in Event.select().where(Event.invoice == invoice.id).order_by(Event.created_at, Event.id)]


def transactions_of(invoice) -> list[Transaction]:
    with db.connection_context():
        return list(Transaction.select().where(Transaction.invoice == invoice.id).order_by(Transaction.created_at))


def make_due(invoice, now=None) -> None:
    with db.connection_context():
        PollState.update(next_poll_at=(now or utcnow()) - dt.timedelta(seconds=1)).where(
            PollState.id == invoice.id).execute()


def next_poll_of(invoice):
    """When the invoice is next polled (None: not any more)."""
    with db.connection_context():
        return poll_state.next_poll_of(invoice.id)


def poll_until_quiet(phase: str, *, now=None, rounds: int = 10, provider=None) -> int:
    """Run one phase's poller repeatedly, making the invoices due each time, until nothing is due."""
    provider = provider or SandboxProvider()
    total = 0
    for _ in range(rounds):
        with db.connection_context():
            PollState.update(next_poll_at=(now or utcnow()) - dt.timedelta(seconds=1)).execute()
            polled = polling.poll_due(phase, provider, clock=lambda: now or utcnow(), base_seconds=5,
                                      batch_size=50, concurrency=2)
        total += polled
        if not polled:
            break
    return total


def run_pipeline(*, now=None, rounds: int = 6) -> None:
    """Chain then settlement polling, alternately, as the scheduler would tick them."""
    for _ in range(rounds):
        moved = poll_until_quiet("chain", now=now, rounds=1) + poll_until_quiet("settlement", now=now, rounds=1)
        if not moved:
            return
