"""Webhooks in the dashboard: endpoints (secret shown once at creation and rotation), their
deliveries with what was sent and what came back, redeliver; the service calls of /v1/webhook-*."""
from __future__ import annotations

import json

from flask import flash, g, redirect, render_template, request, url_for

from blueprints.context import settings
from blueprints.dashboard import bp
from blueprints.dashboard.forms import filled, form_fields
from blueprints.dashboard.session_state import note, requires
from blueprints.requests import load
from core.clock import utcnow
from core.errors import BadRequest, Unprocessable
from infra.pagination import PageRequest
from models.events import EVENT_TYPES
from schemas.webhooks import DeliveryListQuerySchema, WebhookEndpointCreateSchema, WebhookEndpointUpdateSchema
from services.webhooks import endpoints, outbox, webhook_replays

REQUEST_EXCERPT = 2000


def _endpoints_page(**context):
    page = endpoints.list_endpoints(g.store, PageRequest(limit=100))
    return render_template("dashboard/webhooks.html", endpoints=page.rows, event_types=EVENT_TYPES, **context)


@bp.get("/webhooks")
@requires("read")
def webhooks_page():
    return _endpoints_page()


@bp.post("/webhooks")
@requires("develop")
def create_webhook_endpoint():
    fields = {**form_fields(text=("name", "url")), "events": request.form.getlist("events") or ["*"]}
    try:
        endpoint = endpoints.create_endpoint(g.store, load(WebhookEndpointCreateSchema(), fields), now=utcnow(),
                                             allow_private=settings().allow_private_webhook_urls)
    except (BadRequest, Unprocessable) as error:
        return _endpoints_page(error=error.message, values=fields), 400
    note("webhook_endpoint.create", target=endpoint.public_id, detail=endpoint.url)
    # The signing secret, on this answer only.
    return _endpoints_page(new_secret=endpoint.shown_secret, new_endpoint=endpoint)


@bp.get("/webhooks/<endpoint_id>")
@requires("read")
def webhook_endpoint_page(endpoint_id, **context):
    endpoint = endpoints.get_endpoint(g.store, endpoint_id)
    query = load(DeliveryListQuerySchema(), {**filled(("status", "starting_after")), "limit": 25})
    page = endpoints.list_deliveries(endpoint, query, PageRequest.from_query(query))
    return render_template("dashboard/webhook_endpoint.html", endpoint=endpoint, deliveries=page.rows,
                           has_more=page.has_more, **context)


@bp.post("/webhooks/<endpoint_id>/<any(enable, disable):change>")
@requires("develop")
def toggle_webhook_endpoint(endpoint_id, change):
    endpoint = endpoints.get_endpoint(g.store, endpoint_id)
    endpoints.update_endpoint(endpoint, load(WebhookEndpointUpdateSchema(), {"enabled": change == "enable"}),
                              now=utcnow(), allow_private=settings().allow_private_webhook_urls)
    note(f"webhook_endpoint.{change}", target=endpoint.public_id)
    flash(f"Endpoint {change}d.")
    return redirect(url_for("dashboard.webhook_endpoint_page", endpoint_id=endpoint.public_id))


@bp.post("/webhooks/<endpoint_id>/rotate-secret")
@requires("develop", confirmed=True)
def rotate_webhook_secret(endpoint_id):
    endpoint = endpoints.rotate_secret(endpoints.get_endpoint(g.store, endpoint_id), now=utcnow())
    note("webhook_endpoint.rotate_secret", target=endpoint.public_id)
    return webhook_endpoint_page(endpoint.public_id, new_secret=endpoint.shown_secret)


@bp.post("/webhooks/<endpoint_id>/test")
@requires("develop")
def send_test_event(endpoint_id):
    endpoint = endpoints.get_endpoint(g.store, endpoint_id)
    webhook_replays.replay_newest(endpoint, now=utcnow())
    outbox.nudge_delivery()
    note("webhook_endpoint.test", target=endpoint.public_id)
    flash("The newest event is on its way to the endpoint again: its delivery shows below within seconds.")
    return redirect(url_for("dashboard.webhook_endpoint_page", endpoint_id=endpoint.public_id))


@bp.post("/webhooks/<endpoint_id>/delete")
@requires("develop")
def delete_webhook_endpoint(endpoint_id):
    endpoint = endpoints.get_endpoint(g.store, endpoint_id)
    endpoints.delete_endpoint(endpoint)
    note("webhook_endpoint.delete", target=endpoint.public_id, detail=endpoint.url)
    flash("Endpoint deleted.")
    return redirect(url_for("dashboard.webhooks_page"))


@bp.get("/webhooks/deliveries/<delivery_id>")
@requires("read")
def webhook_delivery_page(delivery_id):
    delivery = endpoints.get_delivery(g.store, delivery_id)
    payload = endpoints.get_event(g.store, delivery.event.public_id).payload     # the body as it was sent
    sent = json.dumps(payload, indent=2, ensure_ascii=False)
    return render_template("dashboard/webhook_delivery.html", delivery=delivery,
                           attempts=endpoints.attempts_of(delivery), request_excerpt=sent[:REQUEST_EXCERPT],
                           cut=len(sent) > REQUEST_EXCERPT)


@bp.post("/webhooks/deliveries/<delivery_id>/redeliver")
@requires("develop")
def redeliver_webhook(delivery_id):
    delivery = endpoints.redeliver(g.store, endpoints.get_delivery(g.store, delivery_id), now=utcnow())
    outbox.nudge_delivery()
    note("webhook_delivery.redeliver", target=delivery.public_id)
    flash("Sent again: the new attempt shows here within seconds.")
    return redirect(url_for("dashboard.webhook_delivery_page", delivery_id=delivery.public_id))
