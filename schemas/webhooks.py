"""Webhook endpoint, delivery and event shapes (DECISIONS §11)."""
from marshmallow import RAISE, Schema, fields, validate

from schemas.common import ListQuerySchema
from schemas.fields import StrictString, UtcDateTime
from services.events import EVENT_TYPES
from services.webhooks import DELIVERY_STATUSES

# URL and event kinds load as plain strings: their rules (and the error codes invalid_webhook_url,
# unknown_event_type) belong to services/webhooks.py, shared by create and update.


class WebhookEndpointCreateSchema(Schema):
    class Meta:
        unknown = RAISE

    name = StrictString(load_default=None, allow_none=True, validate=validate.Length(max=100))
    url = fields.String(required=True, validate=validate.Length(min=1, max=4096))
    events = fields.List(fields.String(validate=validate.Length(min=1, max=64)), required=True,
                         validate=validate.Length(max=20))
    enabled = fields.Boolean(load_default=True, truthy={True}, falsy={False})


class WebhookEndpointUpdateSchema(Schema):
    class Meta:
        unknown = RAISE

    name = StrictString(allow_none=True, validate=validate.Length(max=100))
    url = fields.String(validate=validate.Length(min=1, max=4096))
    events = fields.List(fields.String(validate=validate.Length(min=1, max=64)), validate=validate.Length(max=20))
    enabled = fields.Boolean(truthy={True}, falsy={False})


class WebhookEndpointSchema(Schema):
    id = fields.Function(lambda endpoint: endpoint.public_id)
    name = fields.String()
    url = fields.String()
    events = fields.List(fields.String())
    enabled = fields.Boolean()
    disabled_reason = fields.String()
    created_at = UtcDateTime()
    updated_at = UtcDateTime()


class WebhookEndpointWithSecretSchema(WebhookEndpointSchema):
    """Create and rotate only: the one time the secret is shown."""

    secret = fields.Function(lambda endpoint: endpoint.shown_secret)
    previous_secret_expires_at = UtcDateTime()


class DeliveryListQuerySchema(ListQuerySchema):
    status = fields.String(load_default=None, validate=validate.OneOf(DELIVERY_STATUSES))


class EventListQuerySchema(ListQuerySchema):
    type = fields.String(load_default=None, validate=validate.OneOf(EVENT_TYPES))


class WebhookAttemptSchema(Schema):
    number = fields.Integer()
    outcome = fields.String()
    started_at = UtcDateTime()
    status_code = fields.Integer()
    latency_ms = fields.Integer()
    error = fields.String()
    response_excerpt = fields.String()


def _endpoint_id(delivery):
    return delivery.target_endpoint.public_id if delivery.endpoint_id is not None else None


def _url(delivery):
    return delivery.target_endpoint.url if delivery.endpoint_id is not None else delivery.url


class WebhookDeliverySchema(Schema):
    id = fields.Function(lambda delivery: delivery.public_id)
    endpoint_id = fields.Function(_endpoint_id)
    target = fields.Function(lambda d: "endpoint" if d.endpoint_id is not None else "callback_url")
    url = fields.Function(_url)
    event_id = fields.Function(lambda delivery: delivery.event.public_id)
    event_type = fields.Function(lambda delivery: delivery.event.type)
    status = fields.String()
    attempts = fields.Integer()
    next_attempt_at = UtcDateTime()
    last_attempt_at = UtcDateTime()
    last_status_code = fields.Integer()
    last_latency_ms = fields.Integer()
    last_error = fields.String()
    last_response_excerpt = fields.String()
    succeeded_at = UtcDateTime()
    created_at = UtcDateTime()
    updated_at = UtcDateTime()


class WebhookDeliveryDetailSchema(WebhookDeliverySchema):
    attempt_history = fields.List(fields.Nested(WebhookAttemptSchema))
