"""The outbox relay: committed event rows become delivery rows (fan-out); delivery runs
(services/webhooks/webhook_delivery.py) send them.

The database is the truth: an RQ job is only a nudge to do the work now. `nudge_fan_out()` runs
after the event's transaction commits (models/after_commit.py) and queues one run for however many events a burst
commits; if Redis is unreachable the nudge is lost and `relay()` (the scheduler's sweep) fans
the event out a few seconds later instead. Fan-out is
idempotent: the event is marked dispatched by compare-and-set in the same transaction that
creates its deliveries, and (event, target) is unique.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import peewee as pw

from core import ids
from infra import nudges
from infra.locks import write_transaction
from models import compiled, inserts
from models.events import Event
from models.integrations import Integration
from models.invoices import Invoice
from models.webhooks import WebhookDelivery, WebhookEndpoint, subscribes
from services.webhooks import delivery_claim
from services.webhooks.delivery_policy import DeliveryCaps

CALLBACK_TARGET = "callback_url"
RELAY_GRACE = dt.timedelta(seconds=2)        # younger undispatched events are the nudge's to do
RELAY_BATCH = 200
FAN_OUT_JOB = "jobs.webhooks.fan_out_pending"
DELIVER_JOB = "jobs.webhooks.deliver_due"


def nudge_fan_out() -> None:
    """Ask a worker to fan out events once they are committed; a lost nudge only delays."""
    nudges.nudge("webhooks", FAN_OUT_JOB)


def nudge_delivery() -> None:
    """Ask a worker for a delivery run once the caller's transaction commits: one run for a
    burst, since a run claims everything due."""
    nudges.nudge("webhooks", DELIVER_JOB)


@dataclass(frozen=True)
class Dispatching:
    """An event being fanned out, with what its fan-out needs of its invoice."""
    id: object
    store_id: object
    type: str
    callback_url: str | None            # the invoice's legacy callback
    invoice_installation: object        # the storefront installation that created the invoice


def _targets(event: Dispatching) -> list[dict]:
    """The enabled endpoints subscribed to the event's kind, and the invoice's legacy callback.
    A storefront installation's endpoint gets only the invoices created through that
    installation (its dedicated key), never the store's others
    (docs/webhooks.md#storefront-installations). Read from text compiled once (models/compiled.py):
    a fan-out runs for every event."""
    params = [WebhookEndpoint.store.db_value(event.store_id), True]
    endpoints = compiled.execute(("fan-out targets",), params, lambda: (
        WebhookEndpoint.select(WebhookEndpoint.id, WebhookEndpoint.public_id, WebhookEndpoint.events,
                               WebhookEndpoint.failing_since, Integration.id)
        .join(Integration, pw.JOIN.LEFT_OUTER, on=(Integration.webhook_endpoint == WebhookEndpoint.id))
        .where((WebhookEndpoint.store == event.store_id) & (WebhookEndpoint.enabled == True))  # noqa: E712
        .order_by(WebhookEndpoint.created_at)))
    targets = []
    for endpoint_id, public_id, events, failing_since, installation in endpoints.fetchall():
        installation = Integration.id.python_value(installation)
        if (subscribes(WebhookEndpoint.events.python_value(events), event.type)
                and (installation is None or installation == event.invoice_installation)):
            targets.append({"endpoint": WebhookEndpoint.id.python_value(endpoint_id), "target_key": public_id,
                            "url": None, "healthy": failing_since is None})
    if event.callback_url:
        # The legacy callback receives every kind, like an endpoint subscribed to ["*"].
        targets.append({"endpoint": None, "target_key": CALLBACK_TARGET, "url": event.callback_url, "healthy": True})
    return targets


def _mark_dispatched(event_id, *, now: dt.datetime) -> Dispatching | None:
    """Mark the event dispatched unless it already is, and read what its fan-out needs, its
    invoice's legacy callback and installation among it: one statement (RETURNING: SQLite 3.35+
    has it too), its text compiled once. None when the event is unknown or another worker
    dispatched it."""
    params = [Event.dispatched_at.db_value(now), Event.id.db_value(event_id)]

    def mark():
        of_its_invoice = Invoice.select().where(Invoice.id == Event.invoice)
        return (Event.update(dispatched_at=now).where((Event.id == event_id) & Event.dispatched_at.is_null())
                .returning(Event.id, Event.store, Event.type, of_its_invoice.select(Invoice.callback_url),
                           of_its_invoice.select(Invoice.integration_id)))
    row = compiled.execute(("mark event dispatched",), params, mark).fetchone()
    if row is None:
        return None
    event_id, store_id, event_type, callback_url, installation = row
    return Dispatching(Event.id.python_value(event_id), Event.store.python_value(store_id), event_type, callback_url,
                       Invoice.integration_id.python_value(installation))


@dataclass
class FirstAttempts:
    """A delivery run's claim on the first attempts of the deliveries its fan-out creates."""
    token: str
    caps: DeliveryCaps
    budget: int             # at most this many claimed: what the run's slots can send within the lease
    left_unclaimed: int = 0
    rows: list = field(default_factory=list)    # what the claimed deliveries' attempts need (delivery_claim.Claimed)


def fan_out(event_id, *, now: dt.datetime, first: FirstAttempts | None = None) -> int:
    """Create the event's deliveries and mark it dispatched, once. Returns deliveries created
    (0 when the event is unknown or another worker already dispatched it).

    With `first`, the run that fans out claims the new deliveries in the same transaction, to
    send them at once; except where that could hurt fairness (a failing endpoint, an endpoint or
    store at its in-flight cap) or the run has no slot left: those stay due for a delivery run
    (docs/webhooks.md#fairness)."""
    with write_transaction():
        event = _mark_dispatched(event_id, now=now)
        if event is None:
            return 0
        rows, healthy = [], []
        for target in _targets(event):
            row = dict(id=ids.new_uuid(), public_id=ids.new_public_id("whd_"), store=event.store_id, event=event.id,
                       status="pending", attempts=0, next_attempt_at=now, created_at=now, updated_at=now,
                       endpoint=target["endpoint"], target_key=target["target_key"], url=target["url"])
            rows.append(row)
            if target["healthy"]:
                healthy.append(row["id"])
        if not rows:
            return 0
        # One multi-row INSERT, its text compiled once; every row names the same columns.
        created = inserts.insert_rows(WebhookDelivery, rows)
        if first is not None:
            claimed = delivery_claim.claim_deliveries_in_transaction(first.token, first.caps, now=now,
                                                                     limit=first.budget, among=healthy)
            first.rows.extend(claimed.rows)
            first.budget -= claimed.taken
            first.left_unclaimed += created - claimed.taken
        return created


def _undispatched(*, now: dt.datetime, grace: dt.timedelta, batch: int) -> list:
    """Events not dispatched and older than `grace`, oldest first (the partial index event_undispatched)."""
    cutoff = now - grace
    rows = compiled.execute(("undispatched events",), [Event.created_at.db_value(cutoff), batch], lambda: (
        Event.select(Event.id).where(Event.dispatched_at.is_null() & (Event.created_at <= cutoff))
        .order_by(Event.created_at).limit(batch)))
    return [Event.id.python_value(event_id) for (event_id,) in rows.fetchall()]


def relay(*, now: dt.datetime, grace: dt.timedelta = RELAY_GRACE, batch: int = RELAY_BATCH,
          first: FirstAttempts | None = None) -> int:
    """Fan out every event left undispatched for longer than `grace` (lost nudges, Redis outages,
    crashed workers; a nudged run passes no grace). Returns deliveries created; a delivery run
    sends them."""
    created = 0
    while True:
        pending = _undispatched(now=now, grace=grace, batch=batch)
        for event_id in pending:
            created += fan_out(event_id, now=now, first=first)
        if len(pending) < batch:
            return created


def has_due_deliveries(*, now: dt.datetime) -> bool:
    return (WebhookDelivery.select(WebhookDelivery.id)
            .where((WebhookDelivery.status == "pending") & (WebhookDelivery.next_attempt_at <= now))
            .limit(1).exists())


def invoice_history(invoice: Invoice) -> tuple[list[Event], list[WebhookDelivery]]:
    """An invoice's events, oldest first, and the deliveries they fanned out into, oldest first (the
    dashboard's timeline of one invoice): one read, and only the columns the timeline shows (an
    event's payload, the invoice's snapshot, is never decoded here)."""
    rows = (Event.select(Event.id, Event.type, Event.created_at, *_TIMELINE_DELIVERY)
            .join(WebhookDelivery, pw.JOIN.LEFT_OUTER, on=(WebhookDelivery.event == Event.id), attr="delivery")
            .where(Event.invoice == invoice.id)
            .order_by(Event.created_at, Event.id, WebhookDelivery.created_at, WebhookDelivery.id))
    events: dict[str, Event] = {}
    deliveries = []
    for row in rows:
        events.setdefault(row.id, row)
        if getattr(row, "delivery", None) is not None and row.delivery.id is not None:
            deliveries.append(row.delivery)
    deliveries.sort(key=lambda delivery: delivery.created_at)        # stable: ties keep the events' order
    return list(events.values()), deliveries


_TIMELINE_DELIVERY = (WebhookDelivery.id, WebhookDelivery.public_id, WebhookDelivery.event, WebhookDelivery.status,
                      WebhookDelivery.last_status_code, WebhookDelivery.attempts, WebhookDelivery.created_at)
