"""A webhooks worker killed mid-attempt: its claims, renewed every second while it lived, lapse
seconds after its death, and another run records the lost attempt as `interrupted` and delivers the
event (docs/webhooks.md). On PostgreSQL, where claims are renewed; SQLite's claims last
WEBHOOK_CLAIM_SECONDS (one process there)."""
import dataclasses
import os
import signal
import time

import pytest

from models.base import db
from models.webhooks import WebhookAttempt
from services.webhooks import delivery_policy, webhook_delivery
from tests.infra.test_takeover import BUDGET_SECONDS, start_holder
from tests.services.webhooks.test_delivery import create_invoice, delivery_rows, make_endpoint
from tests.support.polling import wait_for

pytestmark = pytest.mark.skipif(not os.environ.get("TEST_DATABASE_URL", "").startswith("postgres"),
                                reason="claims are renewed on PostgreSQL only")


def test_a_delivery_run_killed_mid_attempt_is_taken_over_within_seconds(client, auth, receiver, settings, test_env):
    make_endpoint(client, auth, receiver.url("/hook"), events=("invoice.created",))
    create_invoice(client, auth)
    receiver.trickle("/hook")                # the dead worker's attempt never gets its answer
    lease = 1.5
    holder = start_holder(test_env, "deliver", str(lease), "0.2", holding=lambda: receiver.wait_for(1, path="/hook"),
                          WEBHOOK_TIMEOUT_SECONDS="20", WEBHOOK_CLAIM_SECONDS="45")
    policy = dataclasses.replace(delivery_policy.DeliveryPolicy.from_settings(settings), renewed=True)

    def deliver() -> int:
        with db.connection_context():
            return webhook_delivery.deliver_due(policy, max_seconds=1).succeeded

    try:
        watch_until = time.monotonic() + 1.5 * lease      # alive, it keeps its claim past its lease
        while time.monotonic() < watch_until:
            assert deliver() == 0
            time.sleep(0.1)
        assert len(receiver.requests) == 1          # nobody else attempted the delivery meanwhile
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
    receiver.trickle_paths.pop("/hook")      # the receiver answers again
    wait_for(deliver, timeout=BUDGET_SECONDS, what="another run to take over the dead run's delivery", interval=0.2)
    with db.connection_context():
        attempts = sorted((attempt.number, attempt.outcome) for attempt in WebhookAttempt.select())
    assert attempts == [(1, "interrupted"), (2, "succeeded")]
    assert [(row.status, row.claim_token) for row in delivery_rows()] == [("succeeded", None)]
