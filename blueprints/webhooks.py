from functools import partial

from flask import Blueprint, g

from blueprints.auth import requires_scope
from blueprints.context import settings
from blueprints.errors import validation_status
from blueprints.idempotency import idempotent
from blueprints.requests import json_body, listed, load, load_body
from core.clock import isoformat, utcnow
from schemas.webhooks import (DeliveryListQuerySchema, EventListQuerySchema, WebhookDeliveryDetailSchema,
                              WebhookDeliverySchema, WebhookEndpointCreateSchema, WebhookEndpointSchema,
                              WebhookEndpointUpdatedSchema, WebhookEndpointUpdateSchema,
                              WebhookEndpointWithSecretSchema, WebhookReplayCreateSchema, WebhookReplaySchema)
from services.webhooks import endpoints, outbox, webhook_replays

bp = Blueprint("webhooks", __name__, url_prefix="/v1")


@bp.post("/webhook-endpoints")
@validation_status(422, malformed_json_too=True)
@requires_scope("webhooks:write")
@idempotent(secret_field="secret", shown_again=endpoints.secret_shown_again)
def create_endpoint():
    data = load_body(WebhookEndpointCreateSchema())
    endpoint = endpoints.create_endpoint(g.store, data, now=utcnow(),
                                        allow_private=settings().allow_private_webhook_urls)
    return WebhookEndpointWithSecretSchema().dump(endpoint), 201


@bp.get("/webhook-endpoints")
@requires_scope("webhooks:read")
def list_endpoints():
    return listed(partial(endpoints.list_endpoints, g.store), WebhookEndpointSchema(many=True).dump)


@bp.get("/webhook-endpoints/<endpoint_id>")
@requires_scope("webhooks:read")
def get_endpoint(endpoint_id):
    return WebhookEndpointSchema().dump(endpoints.get_endpoint(g.store, endpoint_id))


@bp.patch("/webhook-endpoints/<endpoint_id>")
@validation_status(422, malformed_json_too=True)
@requires_scope("webhooks:write")
def update_endpoint(endpoint_id):
    before = endpoints.get_endpoint(g.store, endpoint_id)
    data = load_body(WebhookEndpointUpdateSchema())
    now = utcnow()
    endpoint = endpoints.update_endpoint(before, data, now=now, allow_private=settings().allow_private_webhook_urls)
    endpoint.missed_events = None
    if endpoint.enabled and not before.enabled:
        # Re-enabled: say what it missed while disabled, and the call that sends it.
        missed = webhook_replays.missed_while_disabled(before, now=now)
        endpoint.missed_events = {"events": missed.events, "since": missed.since, "replay": {
            "method": "POST", "path": f"/v1/webhook-endpoints/{endpoint.public_id}/replay",
            "body": {"since": isoformat(missed.since)}}}
    return WebhookEndpointUpdatedSchema().dump(endpoint)


@bp.delete("/webhook-endpoints/<endpoint_id>")
@requires_scope("webhooks:write")
def delete_endpoint(endpoint_id):
    endpoint = endpoints.get_endpoint(g.store, endpoint_id)
    endpoints.delete_endpoint(endpoint)
    return {"id": endpoint.public_id, "deleted": True}


@bp.post("/webhook-endpoints/<endpoint_id>/rotate-secret")
@requires_scope("webhooks:write")
@idempotent(secret_field="secret", shown_again=endpoints.secret_shown_again)
def rotate_secret(endpoint_id):
    endpoint = endpoints.rotate_secret(endpoints.get_endpoint(g.store, endpoint_id), now=utcnow())
    return WebhookEndpointWithSecretSchema().dump(endpoint)


@bp.post("/webhook-endpoints/<endpoint_id>/replay")
@validation_status(422, malformed_json_too=True)
@requires_scope("webhooks:write")
@idempotent()
def replay_events(endpoint_id):
    endpoint = endpoints.get_endpoint(g.store, endpoint_id)
    data = load(WebhookReplayCreateSchema(), json_body())
    replay = webhook_replays.replay(endpoint, data, now=utcnow())
    outbox.nudge_delivery()                 # sent once the deliveries are committed
    return WebhookReplaySchema().dump(replay), 202


@bp.get("/webhook-endpoints/<endpoint_id>/deliveries")
@requires_scope("webhooks:read")
def list_deliveries(endpoint_id):
    endpoint = endpoints.get_endpoint(g.store, endpoint_id)
    return listed(partial(endpoints.list_deliveries, endpoint), WebhookDeliverySchema(many=True).dump,
                  DeliveryListQuerySchema())


@bp.get("/webhook-deliveries/<delivery_id>")
@requires_scope("webhooks:read")
def get_delivery(delivery_id):
    delivery = endpoints.get_delivery(g.store, delivery_id)
    delivery.attempt_history = endpoints.attempts_of(delivery)
    return WebhookDeliveryDetailSchema().dump(delivery)


@bp.post("/webhook-deliveries/<delivery_id>/redeliver")
@requires_scope("webhooks:write")
@idempotent()
def redeliver(delivery_id):
    delivery = endpoints.redeliver(g.store, endpoints.get_delivery(g.store, delivery_id), now=utcnow())
    outbox.nudge_delivery()             # after the commit above: a worker sends it now
    delivery.attempt_history = endpoints.attempts_of(delivery)
    return WebhookDeliveryDetailSchema().dump(delivery), 202


@bp.get("/events")
@requires_scope("events:read")
def list_events():
    # An event's body is the payload webhooks carry, stored as sent.
    return listed(partial(endpoints.list_events, g.store), lambda events: [event.payload for event in events],
                  EventListQuerySchema())


@bp.get("/events/<event_id>")
@requires_scope("events:read")
def get_event(event_id):
    # The event is the payload webhooks carry: the invoice as it was at that moment.
    return endpoints.get_event(g.store, event_id).payload
