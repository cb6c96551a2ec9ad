"""Jobs of the `webhooks` queue, and the outbox relay sweep (run on `maintenance` by rq cron).

Each job borrows one database connection, calls services, and is safe to run twice or at once
with itself: fan-out is a compare-and-set on each event, deliveries are claimed from the database.
"""
from __future__ import annotations

import datetime as dt
import logging

from core.clock import utcnow
from infra import nudges
from jobs import ensure_runtime, measured
from models.base import db
from services.webhooks import outbox, webhook_delivery
from services.webhooks.delivery_policy import DeliveryPolicy

log = logging.getLogger("tender.jobs.webhooks")


@measured
def fan_out_pending() -> int:
    """Create the deliveries of every committed event not yet dispatched and send them (nudged
    after commits; one run serves a whole burst of events). Retries are left to delivery runs."""
    settings = ensure_runtime()
    policy = DeliveryPolicy.from_settings(settings)
    with db.connection_context():
        created, _ = webhook_delivery.fan_out_and_deliver(policy)
    return created


@measured
def deliver_due(max_seconds: float = 60.0) -> dict:
    """Send every due delivery, concurrently, for up to `max_seconds`."""
    settings = ensure_runtime()
    policy = DeliveryPolicy.from_settings(settings)
    nudges.run_started(outbox.DELIVER_JOB)      # before looking: later work nudges a new run
    with db.connection_context():
        counts = webhook_delivery.deliver_due(policy, max_seconds=max_seconds)
    return {"succeeded": counts.succeeded, "failed_attempts": counts.failed_attempts, "given_up": counts.given_up}


@measured
def relay_outbox(older_than_seconds: float = 2.0) -> int:
    """The sweep: fan out events whose nudge was lost, and start a delivery run if any is due."""
    ensure_runtime()
    now = utcnow()
    with db.connection_context():
        created = outbox.relay(now=now, grace=dt.timedelta(seconds=older_than_seconds))
        due = outbox.has_due_deliveries(now=now)
    if created:
        log.info("outbox relay dispatched events late: %s deliveries created", created)
    if due:
        outbox.nudge_delivery()
    return created
