"""The outbox relay: committed event rows become delivery rows (fan-out), then deliveries are sent.

The database is the truth: an RQ job is only a nudge to do the work now. `nudge_event()` runs
after the event's transaction commits; if Redis is unreachable the nudge is lost and
`relay()` (the scheduler's sweep) fans the event out a few seconds later instead. Fan-out is
idempotent: the event is marked dispatched by compare-and-set in the same transaction that
creates its deliveries, and (event, target) is unique.
"""
from __future__ import annotations

import datetime as dt
import logging

import redis as redis_lib

from models.base import db, is_postgres
from models.events import Event
from models.invoices import Invoice
from models.webhooks import WebhookDelivery, WebhookEndpoint
from services import ids, queues

log = logging.getLogger("tender.outbox")

CALLBACK_TARGET = "callback_url"
RELAY_GRACE = dt.timedelta(seconds=2)        # younger undispatched events are the nudge's to do
RELAY_BATCH = 200
DELIVER_NUDGE_KEY = "tender:webhooks:deliver-nudge"
DELIVER_NUDGE_MS = 1000
FAN_OUT_JOB = "jobs.webhooks.fan_out_event"
DELIVER_JOB = "jobs.webhooks.deliver_due"


def nudge_event(event_id) -> None:
    """Ask a worker to fan `event_id` out now. Call after commit; losing the nudge only delays."""
    try:
        queues.queue("webhooks").enqueue(FAN_OUT_JOB, str(event_id), result_ttl=0, failure_ttl=3600)
    except redis_lib.RedisError as error:
        log.warning("event %s committed but not nudged (%s); the outbox relay will dispatch it", event_id, error)


def nudge_delivery() -> None:
    """Enqueue one delivery run unless one was enqueued in the last second (a burst of events
    needs one run, not one per event; a run claims everything due)."""
    try:
        connection = queues.redis()
        if connection.set(DELIVER_NUDGE_KEY, "1", nx=True, px=DELIVER_NUDGE_MS):
            queues.queue("webhooks").enqueue(DELIVER_JOB, result_ttl=0, failure_ttl=3600)
    except redis_lib.RedisError as error:
        log.warning("deliveries not nudged (%s); the outbox relay will start them", error)


def _targets(event: Event) -> list[dict]:
    endpoints = (WebhookEndpoint.select()
                 .where((WebhookEndpoint.store == event.store_id) & (WebhookEndpoint.enabled == True))  # noqa: E712
                 .order_by(WebhookEndpoint.created_at))
    targets = [{"endpoint": endpoint.id, "target_key": endpoint.public_id, "url": None}
               for endpoint in endpoints if endpoint.subscribes_to(event.type)]
    callback_url = None
    if event.invoice_id is not None:
        callback_url = (Invoice.select(Invoice.callback_url).where(Invoice.id == event.invoice_id)
                        .scalar())
    if callback_url:
        # The legacy callback receives every kind, like an endpoint subscribed to ["*"].
        targets.append({"endpoint": None, "target_key": CALLBACK_TARGET, "url": callback_url})
    return targets


def fan_out(event_id, *, now: dt.datetime) -> int:
    """Create the event's deliveries and mark it dispatched, once. Returns deliveries created
    (0 when the event is unknown or another worker already dispatched it)."""
    with db.atomic() if is_postgres() else db.atomic(lock_type="IMMEDIATE"):
        claimed = (Event.update(dispatched_at=now)
                   .where((Event.id == event_id) & Event.dispatched_at.is_null()).execute())
        if claimed == 0:
            return 0
        event = Event.get_by_id(event_id)
        rows = [dict(id=ids.new_uuid(), public_id=ids.new_public_id("whd_"), store=event.store_id,
                     event=event.id, status="pending", attempts=0, next_attempt_at=now,
                     created_at=now, updated_at=now, **target) for target in _targets(event)]
        if rows:
            WebhookDelivery.insert_many(rows).execute()
    return len(rows)


def relay(*, now: dt.datetime, grace: dt.timedelta = RELAY_GRACE, batch: int = RELAY_BATCH) -> int:
    """Fan out every event left undispatched for longer than `grace` (lost nudges, Redis outages,
    crashed workers). Uses the partial index event_undispatched. Returns deliveries created."""
    created = 0
    while True:
        pending = list(Event.select(Event.id)
                       .where(Event.dispatched_at.is_null() & (Event.created_at <= now - grace))
                       .order_by(Event.created_at).limit(batch).tuples())
        for (event_id,) in pending:
            created += fan_out(event_id, now=now)
        if len(pending) < batch:
            return created


def has_due_deliveries(*, now: dt.datetime) -> bool:
    return (WebhookDelivery.select(WebhookDelivery.id)
            .where((WebhookDelivery.status == "pending") & (WebhookDelivery.next_attempt_at <= now))
            .limit(1).exists())
