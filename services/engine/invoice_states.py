"""The invoice state machine (docs/payment-engine.md): one table of moves, applied by compare-and-set.

Every move is a conditional UPDATE on the current status, in one transaction with its event
row, so a repeated, replayed or concurrent move is applied exactly once: the loser of a race
updates no row and gets None back.
"""
from __future__ import annotations

import datetime as dt

from infra import metrics
from models import inserts
from models.base import db
from models.invoices import Invoice
from services import payment_links
from services.engine import events

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


# Conditions that belong to a move itself (docs/payment-engine.md), added to whatever guard a caller passes.
GUARDS = {
    "refund": _while_processing,
    "fail": _while_processing,
    "settle": lambda: Invoice.swap_status == "processing",
    "expire": lambda: Invoice.deposit_seen_at.is_null(),
    "cancel": lambda: Invoice.deposit_seen_at.is_null(),
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
    sources, target, event_type = MOVES[trigger]
    extra = ([GUARDS[trigger]()] if trigger in GUARDS else []) + ([guard] if guard is not None else [])
    event = None
    with db.atomic():
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
        if event_type:
            event = events.record(event_type, invoice, now=now, previous_status=previous)
        if target == "paid":
            # A single-use payment link is used up by its payment, in this same transaction.
            payment_links.on_invoice_paid(invoice, now=now)
    events.after_commit(event)
    metrics.count("invoice_moves", trigger, target)
    return invoice


def note_deposit(invoice_id, *, now: dt.datetime) -> bool:
    """Remember that the provider has seen a deposit: from then on the invoice neither expires
    nor can be cancelled (the deposit is the buyer's money in flight). True the first time."""
    return Invoice.update(deposit_seen_at=now, updated_at=now).where(
        (Invoice.id == invoice_id) & Invoice.deposit_seen_at.is_null()).execute() == 1


def create(*, now: dt.datetime, **fields) -> Invoice:
    """Persist a new invoice in `pending` with its `invoice.created` event, atomically."""
    _, target, event_type = MOVES["create"]
    with db.atomic():
        invoice = inserts.insert(Invoice(status=target, created_at=now, updated_at=now, **fields))
        event = events.record(event_type, invoice, now=now)
    events.after_commit(event)
    metrics.count("invoice_moves", "create", target)
    return invoice
