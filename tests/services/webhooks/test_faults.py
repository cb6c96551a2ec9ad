"""Faults: Redis unreachable at commit time, a worker killed mid-delivery, concurrent delivery runs."""
import datetime as dt
import json
import os
import signal
import socket
import subprocess
import sys

import pytest
from rq import SimpleWorker

from core.clock import utcnow
from infra import queues
from jobs import webhooks as webhook_jobs
from models.base import db, is_postgres
from models.events import Event
from models.webhooks import WebhookAttempt
from services.webhooks import webhook_delivery
from tests.services.webhooks.conftest import pump
from tests.services.webhooks.test_delivery import create_invoice, delivery_rows, make_endpoint
from tests.support.concurrency import run_at_once
from tests.support.processes import ROOT


def dead_redis_url() -> str:
    with socket.socket() as probe:          # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"redis://127.0.0.1:{port}/0"


def test_an_event_committed_while_redis_is_down_is_delivered_once_redis_is_back(
        client, auth, receiver, settings, job_settings):
    make_endpoint(client, auth, receiver.url("/hook"))
    queues.connect(dead_redis_url())
    try:
        invoice = create_invoice(client, auth)        # committed; its nudge is lost
    finally:
        queues.connect(settings.redis)            # Redis is back (the same server on the real stack)
    with db.connection_context():
        event = Event.get()
    assert event.dispatched_at is None and event.payload["data"]["object"]["id"] == invoice["id"]
    assert receiver.requests == []
    # The scheduler's relay sweep finds it, fans it out and starts a delivery run on `webhooks`.
    assert webhook_jobs.relay_outbox(older_than_seconds=0) == 1
    queue = queues.queue("webhooks")
    SimpleWorker([queue], connection=queues.redis()).work(burst=True)
    [request] = receiver.wait_for(1)
    assert request.headers["X-Tender-Event-Id"] == event.public_id
    assert delivery_rows()[0].status == "succeeded"


def test_the_relay_leaves_fresh_events_to_their_nudge(client, auth, receiver):
    make_endpoint(client, auth, receiver.url("/hook"))
    create_invoice(client, auth)
    from services.webhooks import outbox

    with db.connection_context():
        assert outbox.relay(now=utcnow()) == 0                                    # younger than the grace
        assert outbox.relay(now=utcnow() + dt.timedelta(seconds=3)) == 1
        assert outbox.relay(now=utcnow() + dt.timedelta(seconds=3)) == 0          # dispatched once


def test_two_delivery_runs_at_once_never_send_one_delivery_twice(client, auth, receiver, policy):
    for number in range(5):
        make_endpoint(client, auth, receiver.url(f"/hook{number}"))
    for _ in range(4):
        create_invoice(client, auth)
    with db.connection_context():
        from services.webhooks import outbox

        outbox.relay(now=utcnow(), grace=dt.timedelta(0))

    def run():
        with db.connection_context():
            webhook_delivery.deliver_due(policy)

    assert run_at_once(run, 3) == []
    receiver.wait_for(20)
    delivery_ids = [r.headers["X-Tender-Delivery-Id"] for r in receiver.requests]
    assert len(delivery_ids) == 20 and len(set(delivery_ids)) == 20
    assert all(row.status == "succeeded" and row.attempts == 1 for row in delivery_rows())


def children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    return found


real_stack = pytest.mark.skipif(not os.environ.get("TEST_REDIS_URL") or not os.environ.get("TEST_DATABASE_URL"),
                                reason="needs a real worker process on PostgreSQL + Redis")


@real_stack
def test_kill_9_of_a_worker_mid_delivery_still_ends_succeeded(client, auth, receiver, test_env, policy):
    assert is_postgres()
    released = receiver.hold("/slow")
    make_endpoint(client, auth, receiver.url("/slow"))
    create_invoice(client, auth)                       # nudges fan_out_pending onto the real `webhooks` queue
    env = {**os.environ, **test_env, "WEBHOOK_TIMEOUT_SECONDS": "20", "WEBHOOK_CLAIM_SECONDS": "45"}
    rq = os.path.join(os.path.dirname(sys.executable), "rq")
    worker = subprocess.Popen([rq, "worker", "--url", test_env["REDIS_URL"], "--burst",
                               "webhooks"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert receiver.held.wait(30), "the worker never reached the receiver"
    finally:
        # The worker and its work horse (RQ puts the horse in its own session), mid-request.
        for pid in [worker.pid] + children_of(worker.pid):
            os.kill(pid, signal.SIGKILL)
        worker.wait(10)
    released.set()
    receiver.wait_for(1)
    [row] = delivery_rows()
    assert row.status == "pending" and row.attempts == 1 and row.claim_token is not None
    # Until the claim runs out, no other run may touch it...
    assert pump(policy).outcomes == []
    # ...and once it has, the next run (the sweep's) sends it again and records it consistently.
    after_claim = row.next_attempt_at + dt.timedelta(seconds=1)
    counts = pump(policy, now=lambda: after_claim)
    assert counts.succeeded == 1
    [row] = delivery_rows()
    assert row.status == "succeeded" and row.attempts == 2 and row.claim_token is None
    assert row.next_attempt_at is None and row.last_status_code == 200
    with db.connection_context():
        history = [(a.number, a.outcome) for a in
                   WebhookAttempt.select().where(WebhookAttempt.delivery == row.id).order_by(WebhookAttempt.number)]
    assert history == [(1, "interrupted"), (2, "succeeded")]
    requests = receiver.wait_for(2)
    assert {r.headers["X-Tender-Delivery-Id"] for r in requests} == {row.public_id}
    assert len({json.loads(r.body)["id"] for r in requests}) == 1
