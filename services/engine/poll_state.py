"""Which poller follows an invoice or a refund and when it asks next (models/polls.py,
docs/payment-engine.md).

The poll state is its own narrow row, so scheduling, claiming and a poll that learns nothing
never write the invoice or the refund. These functions create it when one gets something to poll
(a committed quote, a new refund, a simulated payment or funding), hand it back after a poll, and
drop it when nothing is left to ask.
"""
from __future__ import annotations

import datetime as dt

from infra import claims
from models.invoices import Invoice
from models.polls import PollState
from models.refunds import Refund
from services.engine import invoice_states, refund_states

WATCH_AFTER_DEADLINE = dt.timedelta(hours=24)   # docs/payment-engine.md: watch for late deposits this long


def phase_of(row: Invoice | Refund) -> str | None:
    """The poller an invoice or a refund in this state belongs to, or None when no poller follows it."""
    if isinstance(row, Refund):
        return "refunds" if row.status in refund_states.WATCHED else None
    invoice = row
    if invoice.status == "paid" and invoice.swap_status == "processing":
        return "settlement"            # paid, the conversion still running
    if invoice.status in invoice_states.WATCHED:
        return "chain"                 # a deposit may still arrive or move
    return None


def watch(row: Invoice | Refund, *, at: dt.datetime) -> None:
    """Have the invoice or refund polled at `at`: its poll state is made, or brought forward to `at`.
    Call in the transaction that gives it its deposit address."""
    phase = phase_of(row)
    if phase is None or not row.deposit_address:
        return
    owner = {"refund": row.id} if isinstance(row, Refund) else {"invoice": row.id}
    (PollState.insert(id=row.id, phase=phase, next_poll_at=at, watch_until=row.expires_at + WATCH_AFTER_DEADLINE,
                      **owner)
     .on_conflict(conflict_target=[PollState.id], update={PollState.next_poll_at: at, PollState.phase: phase})
     .execute())


def reschedule(row: Invoice | Refund, token: str, *, at: dt.datetime | None) -> bool:
    """Give a claimed poll state back, due at `at` with the poller the invoice or refund belongs to
    now, or drop it when `at` is None or no poller follows it any more. Only while our lease
    (`token`) is the current one; True when it was."""
    phase = phase_of(row)
    if at is None or phase is None:
        return PollState.delete().where((PollState.id == row.id) & (PollState.claim_token == token)).execute() == 1
    return claims.release(PollState, row.id, token, next_poll_at=at, phase=phase)


def reschedule_unchanged(token: str, due_at: dict) -> int:
    """Give back, in one write, the claimed poll states of rows a poll found unchanged, each due at
    its own time ({invoice or refund id: when}); their poller stays the same."""
    return claims.release_each(PollState, token, PollState.next_poll_at, due_at)


def next_poll_of(row_id) -> dt.datetime | None:
    """When the invoice or refund is next polled; None when it is not polled any more."""
    return PollState.select(PollState.next_poll_at).where(PollState.id == row_id).scalar()
