"""Which poller follows an invoice and when it asks next (models/polls.py, docs/payment-engine.md).

The poll state is its own narrow row, so scheduling, claiming and a poll that learns nothing
never write the invoice. These functions create it when an invoice gets something to poll (a
committed quote, a simulated payment), hand it back after a poll, and drop it when nothing is
left to ask.
"""
from __future__ import annotations

import datetime as dt

from infra import claims
from models.invoices import Invoice
from models.polls import PollState
from services.engine import invoice_states

WATCH_AFTER_DEADLINE = dt.timedelta(hours=24)   # docs/payment-engine.md: watch for late deposits this long


def phase_of(invoice: Invoice) -> str | None:
    """The poller an invoice in this state belongs to, or None when no poller follows it."""
    if invoice.status == "paid" and invoice.swap_status == "processing":
        return "settlement"            # paid, the conversion still running
    if invoice.status in invoice_states.WATCHED:
        return "chain"                 # a deposit may still arrive or move
    return None


def watch(invoice: Invoice, *, at: dt.datetime) -> None:
    """Have the invoice polled at `at`: its poll state is made, or brought forward to `at`."""
    phase = phase_of(invoice)
    if phase is None or not invoice.deposit_address:
        return
    (PollState.insert(invoice=invoice.id, phase=phase, next_poll_at=at,
                      watch_until=invoice.expires_at + WATCH_AFTER_DEADLINE)
     .on_conflict(conflict_target=[PollState.invoice], update={PollState.next_poll_at: at, PollState.phase: phase})
     .execute())


def reschedule(invoice: Invoice, token: str, *, at: dt.datetime | None) -> bool:
    """Give a claimed poll state back, due at `at` with the poller the invoice belongs to now, or
    drop it when `at` is None or no poller follows the invoice any more. Only while our lease
    (`token`) is the current one; True when it was."""
    phase = phase_of(invoice)
    if at is None or phase is None:
        return PollState.delete().where((PollState.invoice == invoice.id) & (PollState.claim_token == token)).execute() == 1
    return claims.release(PollState, invoice.id, token, next_poll_at=at, phase=phase)


def reschedule_unchanged(token: str, due_at: dict) -> int:
    """Give back, in one write, the claimed poll states of invoices a poll found unchanged, each due
    at its own time ({invoice id: when}); their poller stays the same."""
    return claims.release_each(PollState, token, PollState.next_poll_at, due_at)


def next_poll_of(invoice_id) -> dt.datetime | None:
    """When the invoice is next polled; None when it is not polled any more."""
    return PollState.select(PollState.next_poll_at).where(PollState.invoice == invoice_id).scalar()
