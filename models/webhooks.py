import peewee as pw

from models.base import BaseModel
from models.events import Event
from models.fields import JSONTextField
from models.stores import Store

MAX_EXCERPT_BYTES = 1024

DELIVERY_STATUSES = ("pending", "succeeded", "failed")


class WebhookEndpoint(BaseModel):
    id = pw.UUIDField(primary_key=True)
    public_id = pw.CharField(max_length=40, unique=True)        # wh_…
    store = pw.ForeignKeyField(Store, backref="webhook_endpoints", on_delete="CASCADE")
    name = pw.CharField(max_length=100, null=True)
    url = pw.TextField()
    events = JSONTextField()                                     # ["invoice.paid", …] or ["*"]
    secret = pw.CharField(max_length=80)                         # whsec_…: the server must sign
    previous_secret = pw.CharField(max_length=80, null=True)     # still signs until …_expires_at
    previous_secret_expires_at = pw.DateTimeField(null=True)
    enabled = pw.BooleanField(default=True)
    disabled_reason = pw.CharField(max_length=200, null=True)
    failing_since = pw.DateTimeField(null=True)                  # first failure since the last success
    created_at = pw.DateTimeField()
    updated_at = pw.DateTimeField()


def subscribes(events: list[str], event_type: str) -> bool:
    """Whether an endpoint subscribed to `events` gets events of `event_type`."""
    return "*" in events or event_type in events


class WebhookDelivery(BaseModel):
    """One event to one target (an endpoint, or the invoice's legacy callback_url), until it
    succeeds or runs out of retries. The schedule lives on the row (`next_attempt_at`)."""

    id = pw.UUIDField(primary_key=True)
    public_id = pw.CharField(max_length=40, unique=True)        # whd_…
    store = pw.ForeignKeyField(Store, backref="webhook_deliveries", on_delete="CASCADE", index=False)
    event = pw.ForeignKeyField(Event, backref="deliveries", on_delete="CASCADE", index=False)
    endpoint = pw.ForeignKeyField(WebhookEndpoint, backref="deliveries", null=True, on_delete="CASCADE",
                                  index=False)
    # The endpoint's wh_…, "callback_url", or a replay's whr_… (services/webhooks/webhook_replays.py).
    target_key = pw.CharField(max_length=40)
    url = pw.TextField(null=True)                                # callback deliveries only
    status = pw.CharField(max_length=16)                         # pending | succeeded | failed
    attempts = pw.IntegerField(default=0)
    next_attempt_at = pw.DateTimeField(null=True)                # due time; null once final
    claim_token = pw.CharField(max_length=32, null=True)         # set while a worker holds it
    last_attempt_at = pw.DateTimeField(null=True)
    last_status_code = pw.IntegerField(null=True)
    last_latency_ms = pw.IntegerField(null=True)
    last_error = pw.TextField(null=True)
    last_response_excerpt = pw.TextField(null=True)              # at most 1 KiB of the body
    succeeded_at = pw.DateTimeField(null=True)
    created_at = pw.DateTimeField()
    updated_at = pw.DateTimeField()


class WebhookAttempt(BaseModel):
    id = pw.UUIDField(primary_key=True)
    delivery = pw.ForeignKeyField(WebhookDelivery, backref="attempt_rows", on_delete="CASCADE", index=False)
    number = pw.IntegerField()
    outcome = pw.CharField(max_length=16)                        # succeeded | failed | interrupted
    started_at = pw.DateTimeField()
    status_code = pw.IntegerField(null=True)
    latency_ms = pw.IntegerField(null=True)
    error = pw.TextField(null=True)
    response_excerpt = pw.TextField(null=True)
