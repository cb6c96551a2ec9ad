"""The refund state machine (docs/refunds.md): one table of moves, applied by compare-and-set.

As for invoices, every move is a conditional UPDATE on the current status in one transaction with
its event row, so a repeated, replayed or concurrent move is applied exactly once.
"""
from __future__ import annotations

import datetime as dt

from infra import metrics
from models import inserts
from models.base import db
from models.refunds import Refund
from services.engine import events

# trigger: (source statuses, target status, event type or None)
MOVES = {
    "create": ((), "awaiting_funds", "refund.created"),
    # The provider saw the merchant's funding: from now on the money is in flight. A cancelled
    # refund whose funding crossed the cancel goes on too (in its funding window: `funding_seen`).
    "funding_seen": (("awaiting_funds", "cancelled"), "processing", None),
    # Delivered is delivered, whatever the refund's state: the refund shows it and the books count it.
    "succeed": (("awaiting_funds", "processing", "expired", "cancelled"), "succeeded", "refund.succeeded"),
    "fail": (("awaiting_funds", "processing"), "failed", "refund.failed"),
    "expire": (("awaiting_funds",), "expired", "refund.expired"),
    "cancel": (("awaiting_funds",), "cancelled", "refund.cancelled"),
}
GUARDS = {
    "expire": lambda: Refund.deposit_seen_at.is_null(),
    "cancel": lambda: Refund.deposit_seen_at.is_null(),
    # A cancelled refund goes on only while its funding window is open: the funding crossed the
    # cancel and the provider swaps it. Seen after the window closed, the provider sends it back.
    "funding_seen": lambda: (Refund.status == "awaiting_funds") | Refund.funding_closed_at.is_null(),
}
# A refund in one of these holds its amount against the invoice; the others freed it, unless
# money may still reach the buyer through them (`holds_amount`).
HOLDING = ("awaiting_funds", "processing", "succeeded")
# Funding may still arrive or move: what the refund poller watches (closed ones for a late deposit).
WATCHED = ("awaiting_funds", "processing", "expired", "cancelled")
CLOSED_UNFUNDED = ("expired", "cancelled")
FINAL = ("succeeded", "failed")


def holds_amount():
    """Query condition: the refund holds its amount against what its invoice may still refund.

    Besides the holding states: a cancelled refund until its funding window closed (the provider
    still swaps funding that reaches the address before the deadline, whatever Tender told the
    merchant), and any refund whose funding was seen and not sent back, whatever its state
    (docs/refunds.md#money-rules)."""
    window_open = (Refund.status == "cancelled") & Refund.funding_closed_at.is_null()
    funding_kept = (Refund.deposit_seen_at.is_null(False) & Refund.returned_amount.is_null()
                    & (Refund.status != "failed"))
    return Refund.status.in_(HOLDING) | window_open | funding_kept


def holds(refund: Refund) -> bool:
    """`holds_amount` of a row in hand (tests check the two agree)."""
    return (refund.status in HOLDING or (refund.status == "cancelled" and refund.funding_closed_at is None)
            or (refund.deposit_seen_at is not None and refund.returned_amount is None and refund.status != "failed"))


def move(refund_id, trigger: str, *, now: dt.datetime, guard=None, **changes) -> Refund | None:
    """Apply `trigger` if the refund is in one of its source states (and `guard` holds); None when
    it does not apply (already moved, lost a race, or not allowed from the current state)."""
    sources, target, event_type = MOVES[trigger]
    extra = ([GUARDS[trigger]()] if trigger in GUARDS else []) + ([guard] if guard is not None else [])
    event = None
    with db.atomic():
        updated = Refund.update(status=target, updated_at=now, **changes).where(
            Refund.id == refund_id, Refund.status.in_(sources), *extra).execute()
        if updated == 0:
            return None
        refund = Refund.get_by_id(refund_id)
        if event_type:
            event = events.record_refund(event_type, refund, now=now)
    events.after_commit(event)
    metrics.count("refund_moves", trigger, target)
    return refund


def create(*, now: dt.datetime, **fields) -> Refund:
    """Persist a new refund in `awaiting_funds` with its `refund.created` event. Call inside the
    transaction that checked the invoice's refundable amount."""
    _, target, event_type = MOVES["create"]
    refund = inserts.insert(Refund(status=target, created_at=now, updated_at=now, **fields))
    event = events.record_refund(event_type, refund, now=now)
    events.after_commit(event)
    metrics.count("refund_moves", "create", target)
    return refund
