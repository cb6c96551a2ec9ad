"""Webhook endpoints and their deliveries: the merchant-facing verbs and queries (docs/webhooks.md).

Sending lives in services/webhooks/webhook_delivery.py; fan-out of events in services/webhooks/outbox.py."""
from __future__ import annotations

import datetime as dt
import secrets

import peewee as pw

from core import ids
from core.errors import BadRequest, Conflict, Unprocessable
from infra import idempotency, lookups
from infra.locks import lock_row, write_transaction
from infra.pagination import Page, PageRequest, paginate
from models.base import db
from models.events import EVENT_TYPES, Event
from models.integrations import Integration
from models.stores import Store
from models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from services.webhooks.webhook_urls import check_target_url

MAX_ENDPOINTS_PER_STORE = 16
SECRET_PREFIX = "whsec_"
ROTATION_OVERLAP = dt.timedelta(hours=24)


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_hex(32)


def check_events(kinds) -> list[str]:
    """The subscription list: known kinds, or exactly ["*"]; duplicates dropped, order kept."""
    if not kinds:
        raise BadRequest("validation_error", "events: must list at least one event kind", param="events")
    for kind in kinds:
        if kind != "*" and kind not in EVENT_TYPES:
            raise Unprocessable("unknown_event_type",
                                f"events: unknown event kind {kind!r}; known: *, {', '.join(EVENT_TYPES)}",
                              param="events")
    kinds = list(dict.fromkeys(kinds))
    if "*" in kinds and len(kinds) > 1:
        raise BadRequest("validation_error", "events: \"*\" already means every kind; send it alone",
                          param="events")
    return kinds


def create_endpoint(store: Store, data: dict, *, now: dt.datetime, allow_private: bool) -> WebhookEndpoint:
    """The new endpoint, carrying its secret as `shown_secret` for the one response that shows it."""
    url = check_target_url(data["url"], allow_private=allow_private)
    kinds = check_events(data["events"])
    secret = new_secret()
    with write_transaction():
        lock_row(Store, store.id)       # endpoints of a store are counted one writer at a time
        # Storefront installations' endpoints do not count: connect must never fail on the limit.
        installations = Integration.select(Integration.webhook_endpoint).where(Integration.webhook_endpoint.is_null(False))
        count = (WebhookEndpoint.select().where((WebhookEndpoint.store == store.id)
                                                & WebhookEndpoint.id.not_in(installations)).count())
        if count >= MAX_ENDPOINTS_PER_STORE:
            raise Unprocessable("webhook_endpoint_limit",
                                f"A store has at most {MAX_ENDPOINTS_PER_STORE} webhook endpoints; delete one first.")
        endpoint = WebhookEndpoint.create(
            id=ids.new_uuid(), public_id=ids.new_public_id("wh_"), store=store.id, name=data.get("name"),
            url=url, events=kinds, secret=secret, enabled=data.get("enabled", True),
            created_at=now, updated_at=now)
    endpoint.shown_secret = secret
    return endpoint


def get_endpoint(store: Store, public_id: str) -> WebhookEndpoint:
    return lookups.one_in_store(WebhookEndpoint, store, public_id, prefix="wh_", code="webhook_endpoint_not_found",
                                noun="webhook endpoint")


def list_endpoints(store: Store, page: PageRequest) -> Page:
    scope = WebhookEndpoint.store == store.id
    return paginate(WebhookEndpoint.select().where(scope), WebhookEndpoint, page, prefix="wh_", scope=scope)


def refuse_if_managed(endpoint: WebhookEndpoint) -> None:
    """A storefront installation's endpoint changes only through connect and disconnect: a secret
    rotated here would break the plugin's signature checks (services/integrations.py)."""
    integration = Integration.get_or_none((Integration.webhook_endpoint == endpoint.id)
                                          & (Integration.status == "active"))
    if integration is not None:
        raise BadRequest("validation_error",
                         f"This endpoint belongs to the {integration.platform} installation {integration.public_id}: "
                         "reconnect from the plugin to change it or its secret, disconnect to stop it.",
                          param="id")


def update_endpoint(endpoint: WebhookEndpoint, data: dict, *, now: dt.datetime, allow_private: bool) -> WebhookEndpoint:
    refuse_if_managed(endpoint)
    changes = {}
    if "url" in data:
        changes["url"] = check_target_url(data["url"], allow_private=allow_private)
    if "events" in data:
        changes["events"] = check_events(data["events"])
    if "name" in data:
        changes["name"] = data["name"]
    if "enabled" in data:
        changes["enabled"] = data["enabled"]
        if data["enabled"]:
            # Re-enabling starts the failure clock afresh.
            changes.update(disabled_reason=None, failing_since=None)
        elif endpoint.enabled:
            changes["disabled_reason"] = "disabled by the merchant"
    if changes:
        WebhookEndpoint.update(updated_at=now, **changes).where(WebhookEndpoint.id == endpoint.id).execute()
    return WebhookEndpoint.get_by_id(endpoint.id)


def delete_endpoint(endpoint: WebhookEndpoint) -> None:
    """Its deliveries go with it (cascade): nothing more is sent to a deleted endpoint."""
    refuse_if_managed(endpoint)
    with db.atomic():
        WebhookEndpoint.delete().where(WebhookEndpoint.id == endpoint.id).execute()


def rotate_secret(endpoint: WebhookEndpoint, *, now: dt.datetime) -> WebhookEndpoint:
    """A new secret now; the one it replaces still signs (as a second v1=) for 24 hours."""
    refuse_if_managed(endpoint)
    secret = new_secret()
    # previous_secret takes the row's secret as the UPDATE finds it, not the one read above: a
    # rotation racing this one may have replaced it since, and shown its caller the replacement.
    WebhookEndpoint.update(secret=secret, previous_secret=WebhookEndpoint.secret,
                           previous_secret_expires_at=now + ROTATION_OVERLAP, updated_at=now
                           ).where(WebhookEndpoint.id == endpoint.id).execute()
    endpoint = WebhookEndpoint.get_by_id(endpoint.id)
    endpoint.shown_secret = secret
    return endpoint


def secret_shown_again(store: Store, shown: dict, shown_digest: str) -> str:
    """A create or rotation replayed with its Idempotency-Key (its response, and the secret shown once in
    it, may have been lost): the same secret again, read from the endpoint, which must sign with it
    anyway; the idempotency record holds only its digest. Nothing changes, so a replay never stops
    the secret a first answer that did arrive gave the merchant. If the secret has changed since
    (rotated again), it is not the endpoint's to show: 409, and the merchant rotates (docs/decisions.md)."""
    endpoint = get_endpoint(store, shown["id"])
    if idempotency.secret_digest(endpoint.secret) != shown_digest:
        raise Conflict("idempotency_key_in_use", "The secret this request issued has been replaced since; "
                       "rotate the endpoint's secret to get a new one.", param="Idempotency-Key")
    return endpoint.secret


def _deliveries_query():
    return (WebhookDelivery.select(WebhookDelivery, Event.public_id, Event.type, WebhookEndpoint.public_id,
                                   WebhookEndpoint.url)
            .join(Event, on=(WebhookDelivery.event == Event.id))
            .switch(WebhookDelivery)
            .join(WebhookEndpoint, pw.JOIN.LEFT_OUTER, on=(WebhookDelivery.endpoint == WebhookEndpoint.id),
                  attr="target_endpoint"))


def list_deliveries(endpoint: WebhookEndpoint, filters: dict, page: PageRequest) -> Page:
    scope = WebhookDelivery.endpoint == endpoint.id
    query = _deliveries_query().where(scope)
    if filters.get("status"):
        query = query.where(WebhookDelivery.status == filters["status"])
    return paginate(query, WebhookDelivery, page, prefix="whd_", scope=scope)


def get_delivery(store: Store, public_id: str) -> WebhookDelivery:
    return lookups.one_in_store(WebhookDelivery, store, public_id, prefix="whd_", code="webhook_delivery_not_found",
                                noun="webhook delivery", query=_deliveries_query())


def attempts_of(delivery: WebhookDelivery) -> list[WebhookAttempt]:
    return list(WebhookAttempt.select().where(WebhookAttempt.delivery == delivery.id)
                .order_by(WebhookAttempt.number, WebhookAttempt.started_at))


def redeliver(store: Store, delivery: WebhookDelivery, *, now: dt.datetime) -> WebhookDelivery:
    """Make the delivery due now. One attempt is added; if it fails, the retry schedule goes on
    from the attempt count. A delivery a worker holds right now is left to that attempt."""
    if delivery.endpoint_id is not None and not WebhookEndpoint.get_by_id(delivery.endpoint_id).enabled:
        raise BadRequest("validation_error", "The endpoint is disabled; enable it before redelivering.",
                          param="endpoint")
    (WebhookDelivery.update(status="pending", next_attempt_at=now, updated_at=now)
     .where((WebhookDelivery.id == delivery.id) & WebhookDelivery.claim_token.is_null()).execute())
    return get_delivery(store, delivery.public_id)


def get_event(store: Store, public_id: str) -> Event:
    return lookups.one_in_store(Event, store, public_id, prefix="evt_", code="event_not_found", noun="event")


def list_events(store: Store, filters: dict, page: PageRequest) -> Page:
    scope = Event.store == store.id
    query = Event.select().where(scope)
    if filters.get("type"):
        query = query.where(Event.type == filters["type"])
    return paginate(query, Event, page, prefix="evt_", scope=scope)
