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
    # The provider saw the merchant's funding: from now on the money is in flight.
    "funding_seen": (("awaiting_funds",), "processing", None),
    "succeed": (("awaiting_funds", "processing"), "succeeded", "refund.succeeded"),
    "fail": (("awaiting_funds", "processing"), "failed", "refund.failed"),
    "expire": (("awaiting_funds",), "expired", "refund.expired"),
    "cancel": (("awaiting_funds",), "cancelled", "refund.cancelled"),
}
GUARDS = {
    "expire": lambda: Refund.deposit_seen_at.is_null(),
    "cancel": lambda: Refund.deposit_seen_at.is_null(),
}
# A refund in one of these holds its amount against the invoice; the others freed it.
HOLDING = ("awaiting_funds", "processing", "succeeded")
# Funding may still arrive or move: what the refund poller watches (closed ones for a late deposit).
WATCHED = ("awaiting_funds", "processing", "expired", "cancelled")
CLOSED_UNFUNDED = ("expired", "cancelled")
FINAL = ("succeeded", "failed")


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
