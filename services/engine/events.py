"""The transactional outbox: event rows written inside the state change's own transaction."""
from __future__ import annotations

import datetime as dt

from core import clock, ids
from models import inserts
from models.events import API_VERSION, EVENT_TYPES, Event
from models.invoices import Invoice
from models.refunds import Refund
from schemas.invoices import InvoiceSchema
from schemas.refunds import RefundSchema
from services.mail import notices
from services.webhooks import outbox

_invoice_schema = InvoiceSchema()
_refund_schema = RefundSchema()
# False under the sandbox: a simulated payment must never pass for live money (docs/webhooks.md).
_mode = {"livemode": False}


def configure(*, livemode: bool) -> None:
    """Set once at start-up (bootstrap.init_runtime) from the configured swap provider."""
    _mode["livemode"] = livemode


def record(event_type: str, invoice: Invoice, *, now: dt.datetime, previous_status: str | None = None) -> Event:
    """Write one event carrying the invoice as it is now. Call inside the move's transaction.

    `previous_status` is given on `invoice.paid`: it tells a late or topped-up payment apart."""
    return _record(event_type, _invoice_schema.dump(invoice), store_id=invoice.store_id, invoice_id=invoice.id,
                   now=now, previous_status=previous_status, invoice=invoice)


def record_refund(event_type: str, refund: Refund, *, now: dt.datetime) -> Event:
    """Write one `refund.*` event carrying the refund as it is now. It belongs to the refund's
    invoice, so it reaches whoever that invoice's events reach (an installation gets its own)."""
    return _record(event_type, _refund_schema.dump(refund), store_id=refund.store_id, invoice_id=refund.invoice_id,
                   now=now)


def _record(event_type: str, obj: dict, *, store_id, invoice_id, now: dt.datetime,
            previous_status: str | None = None, invoice: Invoice | None = None) -> Event:
    assert event_type in EVENT_TYPES, event_type
    public_id = ids.new_public_id("evt_")
    payload = {
        "id": public_id,
        "type": event_type,
        "api_version": API_VERSION,
        "created_at": clock.isoformat(now),
        "livemode": _mode["livemode"],
        "previous_status": previous_status,     # set on invoice.paid; null on every other kind
        "data": {"object": obj},
    }
    event = inserts.insert(Event(id=ids.new_uuid(), public_id=public_id, store=store_id, invoice=invoice_id,
                                 type=event_type, payload=payload, created_at=now))
    # The mail this fact means (to the merchant, to the buyer), in the same transaction.
    notices.on_event(event_type, obj, event_id=public_id, store_id=store_id, invoice_id=invoice_id, now=now,
                     invoice=invoice)
    return event


def after_commit(event: Event | None) -> None:
    """Nudge the fan-out of `event` once its transaction commits (the outbox's second half): at
    once when that has happened, after the caller's outermost commit when the call is made
    inside a transaction, never if it rolls back (models/after_commit.py)."""
    if event is not None:
        outbox.nudge_fan_out()
