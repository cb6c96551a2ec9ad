"""The fan-out run sends the deliveries it creates: claimed in the fan-out's transaction, no claim of their own."""
import dataclasses
import datetime as dt
import threading

from core.clock import utcnow
from infra import queues
from jobs import webhooks as webhook_jobs
from models.base import db
from models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from services.webhooks import delivery_claim, delivery_policy, outbox, webhook_delivery
from tests.services.webhooks.test_delivery import create_invoice, delivery_rows, make_endpoint


def test_the_fan_out_run_sends_what_it_created_without_a_claim_of_its_own(client, auth, receiver, job_settings,
                                                                          monkeypatch):
    for number in range(2):
        make_endpoint(client, auth, receiver.url(f"/hook-{number}"))
    for number in range(2):
        create_invoice(client, auth, external_order_id=f"ord-{number}")
    calls = []
    real_claim = delivery_claim.claim_deliveries_in_transaction
    monkeypatch.setattr(delivery_claim, "claim_deliveries_in_transaction", lambda *a, **k: calls.append(k.get("among")) or real_claim(*a, **k))

    assert webhook_jobs.fan_out_pending() == 4
    assert len(receiver.requests) == 4
    assert len(calls) == 2 and all(len(among) == 2 for among in calls)     # only inside each fan-out
    rows = delivery_rows()
    assert [(row.status, row.attempts, row.claim_token) for row in rows] == [("succeeded", 1, None)] * 4
    with db.connection_context():
        assert sorted(a.number for a in WebhookAttempt.select()) == [1] * 4
    assert outbox.DELIVER_JOB not in [job.func_name for job in queues.queue("webhooks").jobs]


def test_more_deliveries_than_slots_are_sent_in_batches(client, auth, receiver, job_settings):
    policy = dataclasses.replace(delivery_policy.DeliveryPolicy.from_settings(job_settings), concurrency=2)
    for number in range(3):
        make_endpoint(client, auth, receiver.url(f"/hook-{number}"))
    for number in range(3):
        create_invoice(client, auth, external_order_id=f"ord-{number}")
    with db.connection_context():
        created, counts = webhook_delivery.fan_out_and_deliver(policy)
    assert created == 9 and counts.succeeded == 9 and len(receiver.requests) == 9


def test_runs_send_on_the_process_s_threads_without_starting_new_ones(client, auth, receiver, job_settings):
    """Starting a thread per attempt cost a third of a fan-out run: a second run reuses the first's."""
    policy = delivery_policy.DeliveryPolicy.from_settings(job_settings)
    for number in range(3):
        make_endpoint(client, auth, receiver.url(f"/hook-{number}"))

    def sending_threads():
        return {thread for thread in threading.enumerate() if thread.name.startswith("webhook_")}

    sent = 0
    for round_ in range(2):
        create_invoice(client, auth, external_order_id=f"ord-{round_}")
        with db.connection_context():
            created, counts = webhook_delivery.fan_out_and_deliver(policy)
        sent += counts.succeeded
        if round_ == 0:
            first = sending_threads()
    assert sent == 6 and len(receiver.requests) == 6
    assert first and sending_threads() == first


def test_a_run_that_died_before_sending_leaves_claims_a_delivery_run_takes_over(client, auth, receiver, policy):
    make_endpoint(client, auth, receiver.url("/hook"))
    create_invoice(client, auth)
    with db.connection_context():
        [event_id] = outbox._undispatched(now=utcnow(), grace=dt.timedelta(0), batch=10)
        assert outbox.fan_out(event_id, now=utcnow(), first=outbox.FirstAttempts("dead-run", policy.caps, budget=1)) == 1
        # The run dies here. Until its claim runs out nobody else sends the delivery ...
        assert webhook_delivery.deliver_due(policy).succeeded == 0
        later = utcnow() + dt.timedelta(seconds=policy.claim_seconds + 1)
        counts = webhook_delivery.deliver_due(policy, now=lambda: later)
        attempts = sorted((a.number, a.outcome) for a in WebhookAttempt.select())
    assert counts.succeeded == 1 and len(receiver.requests) == 1
    assert attempts == [(1, "interrupted"), (2, "succeeded")]
    assert delivery_rows()[0].status == "succeeded"
    with db.connection_context():
        assert WebhookDelivery.select().count() == 1


def test_a_new_endpoint_gets_its_first_attempt_at_once_beside_an_older_failing_one(client, auth, receiver, job_settings):
    """The multi-row INSERT took its columns from its first row: an older failing endpoint's
    unclaimed row first dropped the new endpoint's claim, leaving `attempts: 1` and no attempt."""
    receiver.script("/failing", [500] * 5)
    failing = make_endpoint(client, auth, receiver.url("/failing"))
    with db.connection_context():
        WebhookEndpoint.update(failing_since=utcnow()).where(WebhookEndpoint.public_id == failing["id"]).execute()
    fresh = make_endpoint(client, auth, receiver.url("/fresh"))
    create_invoice(client, auth)

    webhook_jobs.fan_out_pending()
    receiver.wait_for(1, path="/fresh")
    with db.connection_context():
        rows = {row.target_key: row for row in WebhookDelivery.select()}
        history = {row.target_key: [a.number for a in WebhookAttempt.select().where(WebhookAttempt.delivery == row.id)]
                   for row in rows.values()}
    new = rows[fresh["id"]]
    assert (new.status, new.attempts, history[fresh["id"]]) == ("succeeded", 1, [1])
    assert new.last_attempt_at is not None
    assert all(row.attempts == len(history[key]) for key, row in rows.items()), (rows, history)
    assert len(receiver.to("/fresh")) == 1
