"""Replaying events to an endpoint after an outage (docs/webhooks.md#replaying-missed-events).

A replay creates a new delivery of every matching event: the store's events of the kinds the
endpoint subscribes to (narrowed by `types`), created in [since, until). The deliveries carry the
replay's own id as their target key, so they sit beside the event's first delivery to the
endpoint (one delivery per event and target stays unique) and are sent, retried and listed like
any other delivery of the endpoint.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import peewee as pw

from core import ids
from core.errors import BadRequest
from models.base import db
from models.events import EVENT_TYPES, Event
from models.integrations import Integration
from models.invoices import Invoice
from models.webhooks import WebhookDelivery, WebhookEndpoint
from services.webhooks.endpoints import check_events

MAX_EVENTS = 10_000
INSERT_BATCH = 500


@dataclass(frozen=True)
class Replay:
    public_id: str
    endpoint_id: str
    since: dt.datetime
    until: dt.datetime
    types: list
    events: int
    created_at: dt.datetime


def _matching_events(endpoint: WebhookEndpoint, since: dt.datetime, until: dt.datetime, types=None):
    """The store's events the endpoint subscribes to (and `types`, if given) in [since, until).
    A storefront installation's endpoint only ever receives its own invoices' events."""
    kinds = EVENT_TYPES if "*" in endpoint.events else endpoint.events
    if types:
        kinds = [kind for kind in kinds if kind in types]
    query = Event.select(Event.id).where((Event.store == endpoint.store_id) & Event.type.in_(list(kinds))
                                         & (Event.created_at >= since) & (Event.created_at < until))
    integration = Integration.get_or_none(Integration.webhook_endpoint == endpoint.id)
    if integration is not None:
        query = query.join(Invoice, on=(Event.invoice == Invoice.id)).where(
            Invoice.integration_id == integration.id)
    return query


def replay(endpoint: WebhookEndpoint, data: dict, *, now: dt.datetime) -> Replay:
    """Create the deliveries, at most MAX_EVENTS, in batched inserts inside one transaction (all or
    none). The caller nudges the delivery worker after the commit."""
    if not endpoint.enabled:
        raise BadRequest("validation_error", "The endpoint is disabled; enable it before replaying.",
                          param="id")
    since, until = data["since"], data.get("until") or now
    if until <= since:
        raise BadRequest("validation_error", "until: must be after since", param="until")
    types = check_events(data["types"]) if data.get("types") else None
    if types == ["*"]:
        types = None
    event_ids = [row[0] for row in _matching_events(endpoint, since, until, types)
                 .order_by(Event.created_at, Event.id).limit(MAX_EVENTS + 1).tuples()]
    if len(event_ids) > MAX_EVENTS:
        raise BadRequest("validation_error",
                         f"More than {MAX_EVENTS} events match; replay at most {MAX_EVENTS} a call: narrow "
                         "since/until (or types) and replay the rest in further calls.", param="until")
    result = Replay(ids.new_public_id("whr_"), endpoint.public_id, since, until, types or ["*"], len(event_ids), now)
    with db.atomic():
        for start in range(0, len(event_ids), INSERT_BATCH):
            WebhookDelivery.insert_many([
                dict(id=ids.new_uuid(), public_id=ids.new_public_id("whd_"), store=endpoint.store_id,
                     event=event_id, endpoint=endpoint.id, target_key=result.public_id, status="pending",
                     attempts=0, next_attempt_at=now, created_at=now, updated_at=now)
                for event_id in event_ids[start:start + INSERT_BATCH]]).execute()
    return result


def replay_newest(endpoint: WebhookEndpoint, *, now: dt.datetime) -> Replay:
    """A test delivery (the dashboard's "Send a test event"): the newest event the endpoint
    subscribes to, delivered to it again, signed and recorded like any other delivery."""
    newest = (_matching_events(endpoint, dt.datetime.min, now + dt.timedelta(seconds=1))
              .select(Event.created_at).order_by(Event.created_at.desc()).first())
    if newest is None:
        raise BadRequest("validation_error", "This endpoint has no event to send yet: create an invoice "
                         "(in the sandbox, simulate its payment) and try again.", param="id")
    return replay(endpoint, {"since": newest.created_at, "until": newest.created_at + dt.timedelta(microseconds=1)},
                  now=now)


@dataclass(frozen=True)
class Missed:
    events: int
    since: dt.datetime


def missed_while_disabled(endpoint: WebhookEndpoint, *, now: dt.datetime) -> Missed:
    """Events the endpoint subscribes to that it has not received since it began failing (or, for
    an endpoint disabled while healthy, since its last change: the disable), for the re-enable
    response. `endpoint` is the row as it was before re-enabling."""
    # Whole seconds, as the replay call's `since` is written: floored, so nothing missed is left out.
    since = (endpoint.failing_since or endpoint.updated_at).replace(microsecond=0)
    received = (WebhookDelivery.select(WebhookDelivery.id)
                .where((WebhookDelivery.event == Event.id) & (WebhookDelivery.endpoint == endpoint.id)
                       & (WebhookDelivery.status == "succeeded")))
    count = (_matching_events(endpoint, since, now).where(~pw.fn.EXISTS(received)).count())
    return Missed(count, since)
