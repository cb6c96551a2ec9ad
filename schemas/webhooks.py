"""Webhook endpoint, delivery and event shapes (docs/webhooks.md)."""
from marshmallow import RAISE, Schema, fields, validate

from models.events import EVENT_TYPES
from models.webhooks import DELIVERY_STATUSES
from schemas.common import ListQuerySchema
from schemas.fields import StrictString, UtcDateTime, one_of
from schemas.invoices import InvoiceSchema
from schemas.refunds import RefundSchema

# URL and event kinds load as plain strings: their rules (and the error codes invalid_webhook_url,
# unknown_event_type) belong to services/webhooks/endpoints.py, shared by create and update.
_URL_DOC = {"pattern": "^https://", "description": "https:// only; never a loopback, private, link-local or "
                                                  "multicast address (422 invalid_webhook_url)."}

_EVENTS_DOC = {"enum": ["*", *EVENT_TYPES]}      # anything else: 422 unknown_event_type


class WebhookEndpointCreateSchema(Schema):
    class Meta:
        unknown = RAISE

    name = StrictString(load_default=None, allow_none=True, validate=validate.Length(max=100))
    url = fields.String(required=True, validate=validate.Length(min=1, max=4096), metadata=_URL_DOC)
    events = fields.List(fields.String(validate=validate.Length(min=1, max=64), metadata=_EVENTS_DOC), required=True,
                         validate=validate.Length(max=20))
    enabled = fields.Boolean(load_default=True, truthy={True}, falsy={False})


class WebhookEndpointUpdateSchema(Schema):
    class Meta:
        unknown = RAISE

    name = StrictString(allow_none=True, validate=validate.Length(max=100))
    url = fields.String(validate=validate.Length(min=1, max=4096), metadata=_URL_DOC)
    events = fields.List(fields.String(validate=validate.Length(min=1, max=64), metadata=_EVENTS_DOC),
                         validate=validate.Length(max=20))
    enabled = fields.Boolean(truthy={True}, falsy={False})


class WebhookEndpointSchema(Schema):
    id = fields.Function(lambda endpoint: endpoint.public_id)
    name = fields.String(allow_none=True)
    url = fields.String()
    events = fields.List(one_of(("*", *EVENT_TYPES)))
    enabled = fields.Boolean()
    disabled_reason = fields.String(allow_none=True)
    created_at = UtcDateTime()
    updated_at = UtcDateTime()


class WebhookEndpointWithSecretSchema(WebhookEndpointSchema):
    """Create and rotate only: the one time the secret is shown."""

    secret = fields.Function(lambda endpoint: endpoint.shown_secret)
    previous_secret_expires_at = UtcDateTime(allow_none=True)


class DeliveryListQuerySchema(ListQuerySchema):
    status = fields.String(load_default=None, validate=validate.OneOf(DELIVERY_STATUSES))


class EventListQuerySchema(ListQuerySchema):
    type = fields.String(load_default=None, validate=validate.OneOf(EVENT_TYPES))


class WebhookAttemptSchema(Schema):
    number = fields.Integer()
    outcome = fields.String()
    started_at = UtcDateTime()
    status_code = fields.Integer(allow_none=True)
    latency_ms = fields.Integer(allow_none=True)
    error = fields.String(allow_none=True)
    response_excerpt = fields.String(allow_none=True)


def _endpoint_id(delivery):
    return delivery.target_endpoint.public_id if delivery.endpoint_id is not None else None


def _url(delivery):
    return delivery.target_endpoint.url if delivery.endpoint_id is not None else delivery.url


class WebhookDeliverySchema(Schema):
    id = fields.Function(lambda delivery: delivery.public_id)
    endpoint_id = fields.Function(_endpoint_id, allow_none=True)
    target = fields.Function(lambda d: "endpoint" if d.endpoint_id is not None else "callback_url",
                             metadata={"type": "string", "enum": ["endpoint", "callback_url"]})
    url = fields.Function(_url, allow_none=True)
    event_id = fields.Function(lambda delivery: delivery.event.public_id)
    event_type = fields.Function(lambda delivery: delivery.event.type,
                                 metadata={"type": "string", "enum": list(EVENT_TYPES)})
    status = one_of(DELIVERY_STATUSES)
    attempts = fields.Integer()
    next_attempt_at = UtcDateTime(allow_none=True)
    last_attempt_at = UtcDateTime(allow_none=True)
    last_status_code = fields.Integer(allow_none=True)
    last_latency_ms = fields.Integer(allow_none=True)
    last_error = fields.String(allow_none=True)
    last_response_excerpt = fields.String(allow_none=True)
    succeeded_at = UtcDateTime(allow_none=True)
    created_at = UtcDateTime()
    updated_at = UtcDateTime()


class WebhookDeliveryDetailSchema(WebhookDeliverySchema):
    attempt_history = fields.List(fields.Nested(WebhookAttemptSchema))


class EventObject(fields.Raw):
    """`data.object`, stored as sent: the invoice on `invoice.*` events, the refund on `refund.*`."""

    documented_as = (InvoiceSchema, RefundSchema)


class EventDataSchema(Schema):
    object = EventObject()


class EventSchema(Schema):
    """An event as GET /v1/events/{id} returns it and as every webhook delivery carries it."""

    id = fields.String(metadata={"pattern": "^evt_[0-9a-f]{32}$"})
    type = fields.String(validate=validate.OneOf(EVENT_TYPES))
    api_version = fields.String()
    created_at = UtcDateTime()
    livemode = fields.Boolean(metadata={"description": "false under the sandbox: no real money moved."})
    previous_status = fields.String(
        allow_none=True, validate=validate.OneOf(("awaiting_payment", "expired", "cancelled", "underpaid")),
        metadata={"description": "On `invoice.paid`: the status it left (a late payment, a deposit that "
                                 "crossed a cancel, or a top-up); null on every other kind."})
    data = fields.Nested(EventDataSchema)


class WebhookEndpointDeletedSchema(Schema):
    id = fields.String()
    deleted = fields.Boolean()


class WebhookReplayCreateSchema(Schema):
    class Meta:
        unknown = RAISE

    since = UtcDateTime(required=True, metadata={"example": "2026-11-20T00:00:00Z"})
    until = UtcDateTime(load_default=None, metadata={"description": "Exclusive; default: now."})
    types = fields.List(fields.String(validate=validate.Length(min=1, max=64), metadata=_EVENTS_DOC),
                        load_default=None, validate=validate.Length(min=1, max=20),
                        metadata={"description": "Default: every kind the endpoint subscribes to."})


class WebhookReplaySchema(Schema):
    """What a replay queued: one new delivery per matching event, sent like any other."""

    id = fields.Function(lambda replay: replay.public_id, metadata={"pattern": "^whr_[0-9a-f]{32}$"})
    endpoint_id = fields.String()
    since = UtcDateTime()
    until = UtcDateTime()
    types = fields.List(fields.String(metadata=_EVENTS_DOC))
    events = fields.Integer(metadata={"description": "Events matched; one new delivery each."})
    created_at = UtcDateTime()


class MissedEventsSchema(Schema):
    events = fields.Integer(metadata={"description": "Subscribed events not received since `since`."})
    since = UtcDateTime()
    replay = fields.Dict(metadata={"description": "The call that sends them: `method`, `path` and `body`.",
                                   "example": {"method": "POST", "path": "/v1/webhook-endpoints/wh_…/replay",
                                               "body": {"since": "2026-11-20T08:00:00Z"}}})


class WebhookEndpointUpdatedSchema(WebhookEndpointSchema):
    """The PATCH response: `missed_events` is set only when this request re-enabled a disabled endpoint."""

    missed_events = fields.Nested(MissedEventsSchema, allow_none=True)
