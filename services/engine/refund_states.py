"""The refund state machine (docs/refunds.md): one table of moves, applied by compare-and-set.

As for invoices, every move is a conditional UPDATE on the current status in one transaction with
its event row, so a repeated, replayed or concurrent move is applied exactly once.
"""
from __future__ import annotations

import datetime as dt
import logging

from infra import metrics
from models import inserts
from models.base import db
from models.refunds import Refund
from services.engine import events
from services.engine.answers import Decisions, Outdated  # noqa: F401  (Outdated: what a lost write raises)

log = logging.getLogger("tender.refunds")

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
# Conditions that belong to a move itself, each written twice side by side, as a query condition
# (`move`) and as the same test of a row in hand (`Answer`); a test checks that they agree.
GUARDS = {
    "expire": (lambda: Refund.deposit_seen_at.is_null(), lambda row: row.deposit_seen_at is None),
    "cancel": (lambda: Refund.deposit_seen_at.is_null(), lambda row: row.deposit_seen_at is None),
    # A cancelled refund goes on only while its funding window is open: the funding crossed the
    # cancel and the provider swaps it. Seen after the window closed, the provider sends it back.
    "funding_seen": (lambda: (Refund.status == "awaiting_funds") | Refund.funding_closed_at.is_null(),
                     lambda row: row.status == "awaiting_funds" or row.funding_closed_at is None),
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



def move(refund_id, trigger: str, *, now: dt.datetime, guard=None, **changes) -> Refund | None:
    """Apply `trigger` if the refund is in one of its source states (and `guard` holds); None when
    it does not apply (already moved, lost a race, or not allowed from the current state)."""
    sources, target, event_type = MOVES[trigger]
    extra = ([GUARDS[trigger][0]()] if trigger in GUARDS else []) + ([guard] if guard is not None else [])
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


def allows(trigger: str, row: Refund) -> bool:
    """Whether `trigger` applies to the refund as it is in `row` (its sources and its own guard)."""
    return row.status in MOVES[trigger][0] and (trigger not in GUARDS or GUARDS[trigger][1](row))


class Answer(Decisions):
    """Everything one provider answer changes on a refund, written as one compare-and-set (as
    invoice_states.Answer is for an invoice).

    Built on the refund as the poller read it. `set`, `move` and `hold` decide on `row`, the refund
    as the answer leaves it so far (one answer can see the funding and the delivery); `write` then
    applies all of it in one UPDATE … RETURNING that holds only while the columns those decisions
    read are still as read, and records the moves' events in the same transaction. On `Outdated`
    (a concurrent writer won: a cancel, the expiry sweep, a second poller) roll back, read the
    refund again and build the answer again."""
    COMPARED = ("status", "provider_status", "provider_ref", "review_reason", "deposit_seen_at", "funded_amount",
                "funding_tx_hash", "returned_amount", "funding_closed_at")

    def __init__(self, refund: Refund, *, now: dt.datetime):
        super().__init__(refund, now=now)
        self._moves: list = []          # (trigger, target, event type)

    def move(self, trigger: str, **changes) -> bool:
        """Apply `trigger` to `row` if it allows it; False when it does not (nothing changes)."""
        if not allows(trigger, self.row):
            return False
        _, target, event_type = MOVES[trigger]
        self.set(status=target, updated_at=self.now, **changes)
        self._moves.append((trigger, target, event_type))
        return True

    def write(self) -> Refund:
        """The refund after the answer: one UPDATE … RETURNING, or no write when nothing changed."""
        if not self.changes:
            return self.read
        refund = self.compare_and_set(self.as_read(self.COMPARED))
        recorded = [events.record_refund(event_type, refund, now=self.now)
                    for _, _, event_type in self._moves if event_type]
        for event in recorded:
            events.after_commit(event)
        for trigger, target, _ in self._moves:
            metrics.count("refund_moves", trigger, target)
        for reason, detail in self._held:
            log.warning("refund held for review: refund=%s reason=%s %s", refund.public_id, reason, detail)
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
