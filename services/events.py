"""The transactional outbox: event rows written inside the state change's own transaction."""
from __future__ import annotations

import datetime as dt

from models.base import db
from models.events import Event
from models.invoices import Invoice
from schemas.invoices import InvoiceSchema
from services import clock, ids, outbox

API_VERSION = "1.0.0"
EVENT_TYPES = (
    "invoice.created", "invoice.awaiting_payment", "invoice.paid", "invoice.settled",
    "invoice.underpaid", "invoice.expired", "invoice.failed", "invoice.refunded", "invoice.cancelled",
)
_invoice_schema = InvoiceSchema()
# False under the sandbox: a simulated payment must never pass for live money (docs/webhooks.md).
_mode = {"livemode": False}


def configure(*, livemode: bool) -> None:
    """Set once at start-up (bootstrap.init_runtime) from the configured swap provider."""
    _mode["livemode"] = livemode


def record(event_type: str, invoice: Invoice, *, now: dt.datetime, previous_status: str | None = None) -> Event:
    """Write one event carrying the invoice as it is now. Call inside the move's transaction.

    `previous_status` is given on `invoice.paid`: it tells a late or topped-up payment apart."""
    assert event_type in EVENT_TYPES, event_type
    public_id = ids.new_public_id("evt_")
    payload = {
        "id": public_id,
        "type": event_type,
        "api_version": API_VERSION,
        "created_at": clock.isoformat(now),
        "livemode": _mode["livemode"],
        "data": {"object": _invoice_schema.dump(invoice)},
    }
    if previous_status is not None:
        payload["previous_status"] = previous_status
    return Event.create(id=ids.new_uuid(), public_id=public_id, store=invoice.store_id, invoice=invoice.id,
                        type=event_type, payload=payload, created_at=now)


def after_commit(event: Event | None) -> None:
    """Nudge the fan-out of an event whose transaction has committed (the outbox's second half).

    Inside a caller's own transaction the event is not committed yet, so no nudge: a job must not
    look for a row it cannot see. The relay sweep dispatches it, or the caller calls
    `outbox.nudge_fan_out()` after its commit."""
    if event is not None and not db.in_transaction():
        outbox.nudge_fan_out()
