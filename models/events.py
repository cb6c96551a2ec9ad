import peewee as pw

from models.base import BaseModel
from models.fields import JSONTextField
from models.invoices import Invoice
from models.stores import Store

# What the API says it is, and the kinds of event it sends (docs/webhooks.md).
API_VERSION = "1.0.0"
EVENT_TYPES = (
    "invoice.created", "invoice.awaiting_payment", "invoice.paid", "invoice.settled",
    "invoice.underpaid", "invoice.expired", "invoice.failed", "invoice.refunded", "invoice.cancelled",
    "refund.created", "refund.succeeded", "refund.failed", "refund.expired", "refund.cancelled",
)


class Event(BaseModel):
    """An outbox row: written in the same transaction as the state change it reports."""

    id = pw.UUIDField(primary_key=True)
    public_id = pw.CharField(max_length=40, unique=True)   # evt_…
    store = pw.ForeignKeyField(Store, backref="events", on_delete="CASCADE")
    invoice = pw.ForeignKeyField(Invoice, backref="events", null=True, on_delete="CASCADE")
    type = pw.CharField(max_length=40)
    payload = JSONTextField()                              # the body webhooks deliver, frozen at the move
    created_at = pw.DateTimeField()
    dispatched_at = pw.DateTimeField(null=True)            # set once fan-out has created the deliveries
