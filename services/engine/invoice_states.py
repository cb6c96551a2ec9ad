"""The invoice state machine (docs/payment-engine.md): one table of moves, applied by compare-and-set.

Every move is a conditional UPDATE on the current status, in one transaction with its event
row, so a repeated, replayed or concurrent move is applied exactly once: the loser of a race
updates no row and gets None back.
"""
from __future__ import annotations

import datetime as dt
import logging

from infra import locks, metrics
from models import inserts
from models.base import db
from models.invoices import Invoice
from services import payment_links, settlement_days
from services.engine import events
from services.engine.answers import Decisions, Outdated  # noqa: F401  (Outdated: what a lost write raises)

log = logging.getLogger("tender.payments")
OPEN = ("pending", "quoted", "awaiting_payment")

# trigger: (source statuses, target status, event type or None)
MOVES = {
    "create": ((), "pending", "invoice.created"),
    "quote": (("pending", "quoted"), "quoted", None),
    "commit_quote": (("pending", "quoted"), "awaiting_payment", "invoice.awaiting_payment"),
    # Late (expired), crossed a cancel (cancelled), or topped up (underpaid): still the buyer's payment.
    "deposit_confirmed": (("awaiting_payment", "expired", "cancelled", "underpaid"), "paid", "invoice.paid"),
    "underpaid": (("awaiting_payment",), "underpaid", "invoice.underpaid"),
    "refund": (("paid", "underpaid", "awaiting_payment"), "refunded", "invoice.refunded"),
    # The merchant's refunds returned all it received (services/engine/refunds.py).
    "refund_in_full": (("paid",), "refunded", "invoice.refunded"),
    "fail": (("paid", "awaiting_payment"), "failed", "invoice.failed"),
    "settle": (("paid",), "paid", "invoice.settled"),
    "expire": (OPEN, "expired", "invoice.expired"),
    "cancel": (OPEN, "cancelled", "invoice.cancelled"),
    # The provider refunded a deposit that came after expiry: the refund transaction is the record.
    "late_refund": (("expired",), "expired", None),
    # ... or a deposit that crossed the merchant's cancel.
    "crossed_refund": (("cancelled",), "cancelled", None),
}
# Moves whose event says where the invoice came from (`previous_status` of `invoice.paid`).
TELLS_PREVIOUS = ("deposit_confirmed",)


def _while_processing():
    # `paid` can still be refunded or fail only while the conversion runs; once settled it is final.
    return (Invoice.status != "paid") | (Invoice.swap_status == "processing")


# Conditions that belong to a move itself (docs/payment-engine.md), added to whatever guard a caller
# passes. Each is written twice, side by side: as a query condition (`move`) and as the same test of
# a row in hand (`Answer`, which decides its moves before its one write); a test checks they agree.
GUARDS = {
    "refund": (_while_processing, lambda row: row.status != "paid" or row.swap_status == "processing"),
    "fail": (_while_processing, lambda row: row.status != "paid" or row.swap_status == "processing"),
    "settle": (lambda: Invoice.swap_status == "processing", lambda row: row.swap_status == "processing"),
    "refund_in_full": (lambda: Invoice.swap_status.is_null() & Invoice.received_amount.is_null(False),
                       lambda row: row.swap_status is None and row.received_amount is not None),
    "expire": (lambda: Invoice.deposit_seen_at.is_null(), lambda row: row.deposit_seen_at is None),
    "cancel": (lambda: Invoice.deposit_seen_at.is_null(), lambda row: row.deposit_seen_at is None),
}


# The vocabulary the rest of the engine speaks, read off the moves above.
QUOTABLE = MOVES["commit_quote"][0]           # may take a (new) quote
CLOSED_UNPAID = ("expired", "cancelled")      # closed before a payment, yet a deposit may still arrive
# A deposit may still arrive or move: what the chain poller watches.
WATCHED = ("awaiting_payment", "underpaid") + CLOSED_UNPAID


def can_quote(invoice: Invoice) -> bool:
    return invoice.status in QUOTABLE


def can_cancel(invoice: Invoice) -> bool:
    return invoice.status in MOVES["cancel"][0] and invoice.deposit_seen_at is None


def move(invoice_id, trigger: str, *, now: dt.datetime, guard=None, **changes) -> Invoice | None:
    """Apply `trigger` if the invoice is in one of its source states (and `guard` holds).

    Returns the updated invoice, or None when the move does not apply (already moved, lost a
    race, or not allowed from the current state).
    """
    summed = settlement_days.SUMMED_FIELDS & changes.keys()
    sources, target, event_type = MOVES[trigger]
    extra = ([GUARDS[trigger][0]()] if trigger in GUARDS else []) + ([guard] if guard is not None else [])
    event = None
    with db.atomic():
        # The statement's roll-up moves what the row held to what it holds: read it, held until commit.
        before = locks.lock_row(Invoice, invoice_id) if summed else None
        previous = None
        if trigger in TELLS_PREVIOUS:
            # Compare-and-set on the exact status read, so the event names the state really left.
            previous = Invoice.select(Invoice.status).where(Invoice.id == invoice_id).scalar()
            if previous not in sources:
                return None
            conditions = [Invoice.id == invoice_id, Invoice.status == previous]
        else:
            conditions = [Invoice.id == invoice_id, Invoice.status.in_(sources)]
        updated = Invoice.update(status=target, updated_at=now, **changes).where(*conditions, *extra).execute()
        if updated == 0:
            return None
        invoice = Invoice.get_by_id(invoice_id)
        if summed:
            settlement_days.invoice_written(before, invoice)
        if event_type:
            event = events.record(event_type, invoice, now=now, previous_status=previous)
        if target == "paid":
            # A single-use payment link is used up by its payment, in this same transaction.
            payment_links.on_invoice_paid(invoice, now=now)
    events.after_commit(event)
    metrics.count("invoice_moves", trigger, target)
    return invoice


def allows(trigger: str, row: Invoice) -> bool:
    """Whether `trigger` applies to the invoice as it is in `row` (its sources and its own guard)."""
    return row.status in MOVES[trigger][0] and (trigger not in GUARDS or GUARDS[trigger][1](row))


class Answer(Decisions):
    """Everything one provider answer changes on an invoice, written as one compare-and-set.

    Built on the invoice as the poller read it. `set`, `move` and `hold` decide on `row`, the
    invoice as the answer leaves it so far (so one answer can pay and settle); `write` then applies
    all of it in one UPDATE that holds only while the columns those decisions read are still as
    read, returns the new row, and records the moves' events in the same transaction. Call it
    inside the transaction that also records the answer's transactions: on `Outdated` (a
    concurrent writer won) roll back, read the invoice again and build the answer again.
    """
    # What the moves and guards decide on: a write made on any other reading of these is refused.
    COMPARED = ("status", "swap_status", "provider_status", "provider_ref", "review_reason")

    def __init__(self, invoice: Invoice, *, now: dt.datetime):
        super().__init__(invoice, now=now)
        self._events: list = []         # (event type, the invoice as that move left it, previous status)
        self._moves: list = []

    def move(self, trigger: str, **changes) -> bool:
        """Apply `trigger` to `row` if it allows it; False when it does not (nothing changes)."""
        if not allows(trigger, self.row):
            return False
        _, target, event_type = MOVES[trigger]
        previous = self.row.status
        self.set(status=target, updated_at=self.now, **changes)
        self.changes.update(status=target, updated_at=self.now)   # a move is written even onto the same status
        if event_type:
            self._events.append((event_type, Invoice(**self.row.__data__),
                                 previous if trigger in TELLS_PREVIOUS else None))
        self._moves.append((trigger, target))
        return True

    def write(self) -> Invoice:
        """The invoice after the answer: one UPDATE … RETURNING, or no write when nothing changed."""
        if not self.changes:
            return self.read
        unchanged = self.as_read(self.COMPARED)
        unchanged.append(Invoice.deposit_seen_at.is_null(self.read.deposit_seen_at is None))
        # The statement's roll-up moves these from their values as read: they must still be those.
        summed = [name for name in settlement_days.SUMMED_FIELDS if name in self.changes]
        invoice = self.compare_and_set(unchanged + self.as_read(summed))
        if summed:
            settlement_days.invoice_written(self.read, invoice)
        recorded = [events.record(event_type, snapshot, now=self.now, previous_status=previous)
                    for event_type, snapshot, previous in self._events]
        if any(target == "paid" for _, target in self._moves):
            payment_links.on_invoice_paid(invoice, now=self.now)
        for event in recorded:
            events.after_commit(event)
        for trigger, target in self._moves:
            metrics.count("invoice_moves", trigger, target)
        for reason, detail in self._held:
            log.warning("invoice held for review: invoice=%s reason=%s %s", invoice.public_id, reason, detail)
            metrics.count("invoices_held", reason)
        return invoice


def create(*, now: dt.datetime, **fields) -> Invoice:
    """Persist a new invoice in `pending` with its `invoice.created` event, atomically."""
    _, target, event_type = MOVES["create"]
    with db.atomic():
        invoice = inserts.insert(Invoice(status=target, created_at=now, updated_at=now, **fields))
        settlement_days.invoice_written(None, invoice)
        event = events.record(event_type, invoice, now=now)
    events.after_commit(event)
    metrics.count("invoice_moves", "create", target)
    return invoice
