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
from infra import claims, nudges
from infra.locks import write_transaction
from models import inserts
from models.events import Event
from models.integrations import Integration
from models.invoices import Invoice
from models.webhooks import WebhookDelivery, WebhookEndpoint

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


def _targets(event: Event) -> list[dict]:
    """The enabled endpoints subscribed to the event's kind, and the invoice's legacy callback
    (`event` as `_mark_dispatched` read it). A storefront installation's endpoint gets only the
    invoices created through that installation (its dedicated key), never the store's others
    (docs/webhooks.md#storefront-installations)."""
    endpoints = (WebhookEndpoint.select(WebhookEndpoint, Integration.id.alias("installation"))
                 .join(Integration, pw.JOIN.LEFT_OUTER, on=(Integration.webhook_endpoint == WebhookEndpoint.id))
                 .where((WebhookEndpoint.store == event.store_id) & (WebhookEndpoint.enabled == True))  # noqa: E712
                 .order_by(WebhookEndpoint.created_at).objects())
    targets = [{"endpoint": endpoint.id, "target_key": endpoint.public_id, "url": None,
                "healthy": endpoint.failing_since is None}
               for endpoint in endpoints if endpoint.subscribes_to(event.type)
               and (endpoint.installation is None or endpoint.installation == event.invoice_installation)]
    if event.callback_url:
        # The legacy callback receives every kind, like an endpoint subscribed to ["*"].
        targets.append({"endpoint": None, "target_key": CALLBACK_TARGET, "url": event.callback_url, "healthy": True})
    return targets


def _mark_dispatched(event_id, *, now: dt.datetime) -> Event | None:
    """Mark the event dispatched unless it already is, and read what its fan-out needs, its
    invoice's legacy callback and installation among it: one statement (RETURNING: SQLite 3.35+
    has it too). None when the event is unknown or another worker dispatched it."""
    of_its_invoice = Invoice.select().where(Invoice.id == Event.invoice)
    marked = (Event.update(dispatched_at=now).where((Event.id == event_id) & Event.dispatched_at.is_null())
              .returning(Event.id, Event.store, Event.type,
                         of_its_invoice.select(Invoice.callback_url).alias("callback_url"),
                         of_its_invoice.select(Invoice.integration_id).alias("invoice_installation")).execute())
    event = next(iter(marked), None)
    if event is not None:       # a subquery's value comes as the driver gives it, not through the field
        event.invoice_installation = Invoice.integration_id.python_value(event.invoice_installation)
    return event


@dataclass
class FirstAttempts:
    """A delivery run's claim on the first attempts of the deliveries its fan-out creates."""
    token: str
    caps: claims.DeliveryCaps
    budget: int             # at most this many claimed: what the run's slots can send within the lease
    left_unclaimed: int = 0
    rows: list = field(default_factory=list)    # what the claimed deliveries' attempts need (claims.Claimed)


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
            claimed = claims.claim_deliveries_in_transaction(first.token, first.caps, now=now, limit=first.budget,
                                                             among=healthy)
            first.rows.extend(claimed.rows)
            first.budget -= claimed.taken
            first.left_unclaimed += created - claimed.taken
        return created


def _undispatched(*, now: dt.datetime, grace: dt.timedelta, batch: int) -> list:
    """Events not dispatched and older than `grace`, oldest first (the partial index event_undispatched)."""
    return [event_id for (event_id,) in Event.select(Event.id)
            .where(Event.dispatched_at.is_null() & (Event.created_at <= now - grace))
            .order_by(Event.created_at).limit(batch).tuples()]


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
