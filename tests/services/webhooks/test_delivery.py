"""End to end: invoice routes and state moves -> outbox -> fan-out -> signed POSTs to a real receiver."""
import dataclasses
import datetime as dt
import json
import time

from rq import SimpleWorker

from core.clock import utcnow
from infra import nudges, queues
from jobs import webhooks as webhook_jobs
from models.base import db
from models.events import Event
from models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from services.engine import invoice_states
from services.webhooks import delivery_claim, delivery_policy, delivery_results, outbox, webhook_sending, webhook_signing
from tests import factories
from tests.services.webhooks.conftest import pump


def make_endpoint(client, auth, url, events=("*",)):
    response = client.post("/v1/webhook-endpoints", json={"url": url, "events": list(events)}, headers=auth)
    assert response.status_code == 201, response.json
    return response.json


def create_invoice(client, auth, **over):
    response = client.post("/v1/invoices", json={"amount": "10.00", "external_order_id": "ord-1", **over},
                           headers=auth)
    assert response.status_code == 201, response.json
    return response.json


def delivery_rows():
    with db.connection_context():
        return list(WebhookDelivery.select().order_by(WebhookDelivery.created_at))


def test_a_signed_delivery_carries_the_event_and_its_headers(client, auth, receiver, policy):
    endpoint = make_endpoint(client, auth, receiver.url("/hook"))
    invoice = create_invoice(client, auth, metadata={"order": "A-17"})
    counts = pump(policy)
    assert counts.succeeded == 1, [o.error for o in counts.outcomes]
    [request] = receiver.wait_for(1)
    body = json.loads(request.body)
    assert body["type"] == "invoice.created" and body["api_version"] == "1.0.0"
    assert body["data"]["object"]["id"] == invoice["id"]
    assert body["data"]["object"]["external_order_id"] == "ord-1"
    assert body["data"]["object"]["metadata"] == {"order": "A-17"}
    headers = request.headers
    assert headers["X-Tender-Event-Id"] == body["id"] and body["id"].startswith("evt_")
    assert headers["X-Tender-Event-Type"] == "invoice.created"
    assert headers["X-Tender-Delivery-Id"].startswith("whd_")
    assert headers["Content-Type"] == "application/json" and headers["User-Agent"] == "Tender-Webhooks/1.0"
    timestamp = int(headers["X-Tender-Timestamp"])
    assert abs(timestamp - time.time()) < 60
    assert webhook_signing.verify(endpoint["secret"], headers["X-Tender-Signature"], timestamp, request.body,
                                  now=int(time.time()))
    assert not webhook_signing.verify("whsec_" + "0" * 64, headers["X-Tender-Signature"], timestamp,
                                      request.body, now=int(time.time()))
    [row] = delivery_rows()
    assert row.status == "succeeded" and row.attempts == 1 and row.last_status_code == 200
    assert row.last_response_excerpt == "ok" and row.last_latency_ms >= 0 and row.claim_token is None
    # The delivery as the API shows it.
    detail = client.get(f"/v1/webhook-deliveries/{row.public_id}", headers=auth).json
    assert detail["status"] == "succeeded" and detail["event_id"] == body["id"]
    assert detail["endpoint_id"] == endpoint["id"] and detail["target"] == "endpoint"
    assert [a["outcome"] for a in detail["attempt_history"]] == ["succeeded"]
    listed = client.get(f"/v1/webhook-endpoints/{endpoint['id']}/deliveries", headers=auth).json
    assert [d["id"] for d in listed["data"]] == [row.public_id] and listed["has_more"] is False


def test_a_subscriber_to_paid_only_never_receives_created(client, auth, receiver, policy):
    make_endpoint(client, auth, receiver.url("/all"))
    make_endpoint(client, auth, receiver.url("/paid"), events=["invoice.paid"])
    invoice = create_invoice(client, auth)
    with db.connection_context():
        invoice_id = factories.Invoice.get(factories.Invoice.public_id == invoice["id"]).id
    now = utcnow()
    assert invoice_states.move(invoice_id, "commit_quote", now=now) is not None
    assert invoice_states.move(invoice_id, "deposit_confirmed", now=now, paid_at=now) is not None   # engine's call
    pump(policy)
    receiver.wait_for(3, path="/all")
    types_all = [json.loads(r.body)["type"] for r in receiver.to("/all")]
    assert sorted(types_all) == ["invoice.awaiting_payment", "invoice.created", "invoice.paid"]
    [paid] = receiver.to("/paid")
    assert json.loads(paid.body)["type"] == "invoice.paid"
    assert json.loads(paid.body)["data"]["object"]["status"] == "paid"
    assert len(delivery_rows()) == 4


def test_failures_are_retried_on_the_schedule_then_give_up(client, auth, receiver, policy):
    receiver.script("/flaky", [500, (503, "busy", {})])                 # then 200
    receiver.script("/down", [500, 500, 500, 500])
    make_endpoint(client, auth, receiver.url("/flaky"))
    make_endpoint(client, auth, receiver.url("/down"))
    create_invoice(client, auth)
    counts = pump(policy)                     # schedule (0, 0): three attempts in one run
    assert counts.succeeded == 1 and counts.given_up == 1
    assert len(receiver.to("/flaky")) == 3 and len(receiver.to("/down")) == 3
    ids = {r.headers["X-Tender-Delivery-Id"] for r in receiver.to("/flaky")}
    assert len(ids) == 1                      # the same delivery each time, re-signed
    with db.connection_context():
        by_url = {row.endpoint.url: row for row in WebhookDelivery.select()}
        flaky, down = by_url[receiver.url("/flaky")], by_url[receiver.url("/down")]
        assert flaky.status == "succeeded" and flaky.attempts == 3
        assert down.status == "failed" and down.attempts == 3 and down.next_attempt_at is None
        assert down.last_status_code == 500 and down.last_error == "HTTP 500" and down.last_response_excerpt == "nope"
        outcomes = [a.outcome for a in WebhookAttempt.select().where(WebhookAttempt.delivery == flaky.id)
                    .order_by(WebhookAttempt.number)]
        assert outcomes == ["failed", "failed", "succeeded"]
        endpoint = WebhookEndpoint.get_by_id(down.endpoint_id)
        assert endpoint.failing_since is not None and endpoint.enabled


def test_retry_times_follow_the_schedule_with_jitter():
    policy = delivery_policy.DeliveryPolicy((60, 300), 10, 60, 4, True)
    now = utcnow()
    for _ in range(50):
        first = (policy.next_attempt_at(1, now) - now).total_seconds()
        assert 60 <= first <= 66
        assert 300 <= (policy.next_attempt_at(2, now) - now).total_seconds() <= 330
    assert policy.next_attempt_at(3, now) is None


def test_a_retry_waits_until_it_is_due(client, auth, receiver):
    policy = delivery_policy.DeliveryPolicy((60,), 5, 30, 4, True)
    receiver.script("/hook", [500])
    make_endpoint(client, auth, receiver.url("/hook"))
    create_invoice(client, auth)
    pump(policy)
    assert len(receiver.to("/hook")) == 1
    [row] = delivery_rows()
    # From the attempt's own time, not the clock after it: a loaded machine may take seconds to get here.
    assert row.status == "pending" and row.next_attempt_at >= row.last_attempt_at + dt.timedelta(seconds=55)
    pump(policy)                                             # not due yet: nothing sent
    assert len(receiver.to("/hook")) == 1
    later = utcnow() + dt.timedelta(seconds=70)
    pump(policy, now=lambda: later)
    assert len(receiver.to("/hook")) == 2
    assert delivery_rows()[0].status == "succeeded"


def test_redeliver_sends_again(client, auth, receiver, policy):
    make_endpoint(client, auth, receiver.url("/hook"))
    create_invoice(client, auth)
    pump(policy)
    [row] = delivery_rows()
    response = client.post(f"/v1/webhook-deliveries/{row.public_id}/redeliver", headers=auth)
    assert response.status_code == 202 and response.json["status"] == "pending"
    pump(policy)
    first, second = receiver.wait_for(2)
    assert first.headers["X-Tender-Event-Id"] == second.headers["X-Tender-Event-Id"]
    [row] = delivery_rows()
    assert row.status == "succeeded" and row.attempts == 2
    assert client.post("/v1/webhook-deliveries/whd_" + "0" * 32 + "/redeliver", headers=auth).status_code == 404


def test_a_duplicated_job_never_resends_a_succeeded_delivery(client, auth, receiver, policy):
    make_endpoint(client, auth, receiver.url("/hook"))
    create_invoice(client, auth)
    pump(policy)
    pump(policy)
    with db.connection_context():
        event = Event.get()
        assert outbox.fan_out(event.id, now=utcnow()) == 0        # a second fan-out adds nothing
    pump(policy)
    assert len(receiver.wait_for(1)) == 1 and len(delivery_rows()) == 1


def test_410_disables_the_endpoint_at_once(client, auth, receiver, policy):
    receiver.script("/gone", [410])
    endpoint = make_endpoint(client, auth, receiver.url("/gone"))
    create_invoice(client, auth)
    pump(policy)
    got = client.get(f"/v1/webhook-endpoints/{endpoint['id']}", headers=auth).json
    assert got["enabled"] is False and "410" in got["disabled_reason"]
    assert delivery_rows()[0].status == "failed" and len(receiver.to("/gone")) == 1
    create_invoice(client, auth)                     # a disabled endpoint gets no new deliveries
    pump(policy)
    assert len(delivery_rows()) == 1 and len(receiver.to("/gone")) == 1


def test_three_days_of_failures_disable_the_endpoint(client, auth, receiver, policy):
    receiver.script("/down", [500] * 10)
    endpoint = make_endpoint(client, auth, receiver.url("/down"))
    with db.connection_context():
        WebhookEndpoint.update(failing_since=utcnow() - dt.timedelta(days=3, minutes=1)).execute()
    create_invoice(client, auth)
    pump(policy)
    got = client.get(f"/v1/webhook-endpoints/{endpoint['id']}", headers=auth).json
    assert got["enabled"] is False and got["disabled_reason"] == "every delivery failed for 3 days"


def test_a_success_resets_the_failure_clock(client, auth, receiver, policy):
    make_endpoint(client, auth, receiver.url("/hook"))
    with db.connection_context():
        WebhookEndpoint.update(failing_since=utcnow() - dt.timedelta(days=2)).execute()
    create_invoice(client, auth)
    pump(policy)
    with db.connection_context():
        assert WebhookEndpoint.get().failing_since is None


def test_after_rotation_both_secrets_sign_for_a_day(client, auth, receiver, policy):
    endpoint = make_endpoint(client, auth, receiver.url("/hook"))
    rotated = client.post(f"/v1/webhook-endpoints/{endpoint['id']}/rotate-secret", headers=auth).json
    create_invoice(client, auth)
    pump(policy)
    [request] = receiver.wait_for(1)
    header, timestamp = request.headers["X-Tender-Signature"], int(request.headers["X-Tender-Timestamp"])
    assert header.count("v1=") == 2
    for secret in (endpoint["secret"], rotated["secret"]):
        assert webhook_signing.verify(secret, header, timestamp, request.body, now=timestamp)
    with db.connection_context():
        WebhookEndpoint.update(previous_secret_expires_at=utcnow() - dt.timedelta(seconds=1)).execute()
    client.post(f"/v1/webhook-deliveries/{delivery_rows()[0].public_id}/redeliver", headers=auth)
    pump(policy)
    later = receiver.wait_for(2)[1]
    assert later.headers["X-Tender-Signature"].count("v1=") == 1
    assert not webhook_signing.verify(endpoint["secret"], later.headers["X-Tender-Signature"],
                                      int(later.headers["X-Tender-Timestamp"]), later.body, now=timestamp)


def test_the_legacy_callback_url_is_signed_with_the_store_callback_secret(store, receiver, policy):
    invoice = factories.make_invoice(store, callback_url=receiver.url("/callback"))
    pump(policy)
    [request] = receiver.wait_for(1, path="/callback")
    assert json.loads(request.body)["data"]["object"]["id"] == invoice.public_id
    timestamp = int(request.headers["X-Tender-Timestamp"])
    assert webhook_signing.verify(store.callback_secret, request.headers["X-Tender-Signature"], timestamp,
                                  request.body, now=timestamp)
    [row] = delivery_rows()
    assert row.endpoint_id is None and row.target_key == "callback_url" and row.status == "succeeded"


def test_redirects_are_failures(client, auth, receiver, policy):
    receiver.script("/moved", [(302, "", {"Location": receiver.url("/hook")})] * 3)
    make_endpoint(client, auth, receiver.url("/moved"))
    create_invoice(client, auth)
    pump(policy)
    assert receiver.to("/hook") == []
    [row] = delivery_rows()
    assert row.status == "failed" and row.last_status_code == 302 and "redirect" in row.last_error


def test_delivery_time_check_refuses_a_host_that_now_resolves_to_loopback(client, auth, receiver, policy):
    # Saved while allowed (or before its DNS changed); `localhost` now resolves to 127.0.0.1.
    make_endpoint(client, auth, f"https://localhost:{receiver.port}/hook")
    make_endpoint(client, auth, receiver.url("/plain-http"))
    create_invoice(client, auth)
    strict = dataclasses.replace(policy, allow_private=False, retry_schedule=())
    pump(strict)
    assert receiver.requests == []
    errors = sorted(row.last_error for row in delivery_rows())
    assert errors[0] == "refused: localhost resolves to 127.0.0.1 is a loopback address" or "loopback" in errors[0]
    assert "https" in errors[1]
    assert all(row.status == "failed" for row in delivery_rows())


def test_a_connection_error_is_recorded(client, auth, policy):
    from tests.support.receiver import Receiver

    with Receiver() as closed:
        url = closed.url("/hook")
    make_endpoint(client, auth, url)          # nothing listens there any more
    create_invoice(client, auth)
    pump(dataclasses.replace(policy, retry_schedule=()))
    [row] = delivery_rows()
    assert row.status == "failed" and row.last_status_code is None and row.last_error.startswith("connection failed")


def test_job_functions_and_one_simpleworker_run(client, auth, receiver, job_settings):
    make_endpoint(client, auth, receiver.url("/hook"))
    create_invoice(client, auth)                      # the route nudged fan_out_pending onto `webhooks`
    queue = queues.queue("webhooks")
    assert queue.count >= 1
    worker = SimpleWorker([queue], connection=queues.redis())
    assert worker.work(burst=True)                    # fan_out_pending, then the deliver_due it nudged
    receiver.wait_for(1)
    assert delivery_rows()[0].status == "succeeded"
    assert queue.failed_job_registry.count == 0
    # Called directly, the relay and delivery jobs find nothing more to do.
    assert webhook_jobs.relay_outbox(older_than_seconds=0) == 0
    assert webhook_jobs.deliver_due() == {"succeeded": 0, "failed_attempts": 0, "given_up": 0}
    assert len(receiver.requests) == 1


def test_a_batch_of_results_writes_only_the_deliveries_whose_claim_still_holds(client, auth, receiver, policy):
    """record() writes a batch in one statement on PostgreSQL; a result whose claim was lost (the
    claim ran out and another worker re-claimed) must still be dropped, the others kept."""
    make_endpoint(client, auth, receiver.url("/hook"))
    for number in range(3):
        create_invoice(client, auth, external_order_id=f"ord-{number}")
    with db.connection_context():
        for event in Event.select():
            outbox.fan_out(event.id, now=utcnow())
        work = delivery_claim.claim_due(policy, now=utcnow(), limit=10)
        assert len(work) == 3
        lost, kept_ok, kept_failed = work
        WebhookDelivery.update(claim_token="taken-over-by-another").where(
            WebhookDelivery.id == lost.delivery_id).execute()
        now = utcnow()
        outcomes = [webhook_sending.Outcome(lost, now, ok=True, status_code=200, latency_ms=3, excerpt="ok"),
                    webhook_sending.Outcome(kept_ok, now, ok=True, status_code=200, latency_ms=4, excerpt="ok"),
                    webhook_sending.Outcome(kept_failed, now, ok=False, status_code=503, latency_ms=5,
                                             error="HTTP 503", excerpt="busy")]
        counts = delivery_results.RunCounts()
        delivery_results.record(outcomes, policy, now=now, counts=counts)
        rows = {row.id: row for row in WebhookDelivery.select()}
        attempts = {row.delivery_id: row for row in WebhookAttempt.select()}
    assert counts.succeeded == 1 and counts.failed_attempts == 1
    assert rows[lost.delivery_id].status == "pending" and rows[lost.delivery_id].claim_token == "taken-over-by-another"
    assert rows[lost.delivery_id].last_status_code is None and lost.delivery_id not in attempts
    ok = rows[kept_ok.delivery_id]
    assert ok.status == "succeeded" and ok.succeeded_at == now and ok.claim_token is None
    assert ok.next_attempt_at is None and ok.last_latency_ms == 4 and attempts[kept_ok.delivery_id].outcome == "succeeded"
    failed = rows[kept_failed.delivery_id]
    assert failed.status == "pending" and failed.next_attempt_at is not None and failed.succeeded_at is None
    assert failed.last_status_code == 503 and failed.last_error == "HTTP 503" and failed.last_response_excerpt == "busy"
    assert attempts[kept_failed.delivery_id].outcome == "failed"


def test_a_burst_of_events_is_fanned_out_by_one_job_and_none_is_missed(client, auth, receiver, job_settings):
    make_endpoint(client, auth, receiver.url("/hook"))
    for number in range(5):
        create_invoice(client, auth, external_order_id=f"ord-{number}")
    webhooks_queue = queues.queue("webhooks")
    assert [job.func_name for job in webhooks_queue.jobs] == ["jobs.webhooks.fan_out_pending"]

    # The run clears its flag before it looks, so an event committed after the look gets its own run.
    webhook_jobs.fan_out_pending()
    assert not queues.redis().exists(nudges.flag(outbox.FAN_OUT_JOB))
    create_invoice(client, auth, external_order_id="ord-late")
    assert [job.func_name for job in webhooks_queue.jobs].count("jobs.webhooks.fan_out_pending") == 2

    webhook_jobs.fan_out_pending()
    assert len(delivery_rows()) == 6
    with db.connection_context():
        assert not Event.select().where(Event.dispatched_at.is_null()).exists()
