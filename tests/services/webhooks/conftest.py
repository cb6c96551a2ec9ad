"""Fixtures for webhook tests: a live receiver, a short retry policy, and helpers to run the pipe."""
from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

import jobs
from core.clock import utcnow
from models.base import db
from services.webhooks import delivery_policy, outbox, webhook_delivery
from tests.support.receiver import Receiver


@pytest.fixture
def receiver():
    with Receiver() as live:
        yield live


@pytest.fixture
def policy():
    # Retries at once (0 s) so a test sees the whole schedule in one run, without waiting.
    return delivery_policy.DeliveryPolicy(retry_schedule=(0, 0), timeout_seconds=5, claim_seconds=30,
                                           concurrency=4, allow_private=True)


@pytest.fixture
def job_settings(settings):
    """The runtime the job functions see, with a short retry schedule."""
    short = dataclasses.replace(settings, webhook_retry_schedule=(0, 0), webhook_timeout_seconds=5,
                                webhook_claim_seconds=30, webhook_concurrency=4)
    jobs.use_runtime(short)
    yield short
    jobs.use_runtime(settings)


def pump(policy, *, now=utcnow):
    """What the workers do: fan out every committed event, then send everything due."""
    with db.connection_context():
        outbox.relay(now=now(), grace=dt.timedelta(0))
        return webhook_delivery.deliver_due(policy, now=now)
