"""The storefront flow end to end (spec: Events, receiver rules 1-6): a plugin connects, creates an
invoice with its dedicated key, the invoice is paid, Tender's real outbox and delivery jobs POST
signed events to a reference receiver on 127.0.0.1 built on kit/tender_receiver.py."""
import json
import time
import urllib.error
import urllib.request

import pytest
from rq import SimpleWorker

from infra import queues
from jobs import webhooks as webhook_jobs
from kit.tender_receiver import sign
from models.base import db
from models.webhooks import WebhookDelivery
from tests import payflow
from tests.services.integrations.conftest import bearer, connect, route
from tests.support.storefront_receiver import StorefrontReceiver


@pytest.fixture
def shop(job_settings):
    with StorefrontReceiver() as live:
        yield live


def connect_shop(client, shop, auth):
    body = connect(client, auth, webhook_url=shop.url)
    shop.configure(secret=body["webhook_secret"], integration_id=body["integration_public_id"])
    return body


def create_order_invoice(client, dedicated, order):
    response = client.post("/v1/invoices", json={"amount": "25.00", "external_order_id": order,
                                                  "metadata": {"wc_order_key": "wc_order_abc"}}, headers=dedicated)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def pay(client, merchant_auth, invoice_id):
    """The buyer pays in the sandbox (the test-helper route records the deposit), and the chain and
    settlement pollers move the invoice to paid and settled, as the scheduler's ticks would."""
    response = client.post(f"/v1/test_helpers/invoices/{invoice_id}/pay", headers=merchant_auth)
    assert response.status_code == 202, response.json
    payflow.run_pipeline()


def run_workers(shop, answers, *, timeout=15.0):
    """What the worker processes do, until the shop has `answers` answers: a burst of a real RQ
    worker on every queue; the outbox relay sweep when a nudge was coalesced. Deadline, no sleeps."""
    worker_queues = [queues.queue(name) for name in queues.QUEUE_NAMES]
    deadline = time.monotonic() + timeout
    while len(shop.exchanges) < answers:
        SimpleWorker(worker_queues, connection=queues.redis()).work(burst=True)
        if len(shop.exchanges) >= answers:
            break
        assert time.monotonic() < deadline, f"{len(shop.exchanges)} of {answers} deliveries answered"
        webhook_jobs.relay_outbox(older_than_seconds=0)
    assert queues.queue("webhooks").failed_job_registry.count == 0
    return shop.wait_for_answers(answers)


def post(url, headers, body):
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_paid_invoice_marks_its_order_paid_exactly_once(client, auth, bootstrap_auth, shop):
    connection = connect_shop(client, shop, bootstrap_auth)
    dedicated = bearer(connection["api_key"])
    invoice = create_order_invoice(client, dedicated, "wc-1001")                     # rule 1
    pay(client, auth, invoice["id"])                                                 # rule 2
    exchanges = run_workers(shop, 4)                                                 # rule 3
    by_type = {json.loads(e.body)["type"]: e for e in exchanges}
    assert set(by_type) == {"invoice.created", "invoice.awaiting_payment", "invoice.paid", "invoice.settled"}
    paid = by_type["invoice.paid"]
    event = json.loads(paid.body)
    assert paid.status == 200 and paid.answer == {"received": True}                 # rules 4, 5
    assert paid.headers["X-Tender-Integration-Id"] == connection["integration_public_id"]
    assert paid.headers["X-Tender-Event-Id"] == event["id"]
    assert event["data"]["object"]["id"] == invoice["id"]
    assert event["data"]["object"]["external_order_id"] == "wc-1001"
    assert event["data"]["object"]["metadata"] == {"wc_order_key": "wc_order_abc"}
    assert shop.paid_orders == {"wc-1001": 1}

    # A redelivery of the same event (Tender's retry, or the merchant's redeliver): rule 6.
    with db.connection_context():
        delivery = (WebhookDelivery.select().join_from(WebhookDelivery, WebhookDelivery.event.rel_model)
                    .where(WebhookDelivery.event.rel_model.public_id == event["id"]).get())
    response = client.post(f"/v1/webhook-deliveries/{delivery.public_id}/redeliver", headers=auth)
    assert response.status_code == 202, response.get_json()
    again = run_workers(shop, 5)[4]
    assert again.headers["X-Tender-Event-Id"] == event["id"]
    assert again.status == 200 and again.answer == {"duplicate": True}
    assert shop.paid_orders == {"wc-1001": 1}
    assert shop.events_acted_on.count(event["id"]) == 1
    detail = client.get(f"/v1/webhook-deliveries/{delivery.public_id}", headers=auth).get_json()
    assert detail["status"] == "succeeded" and json.loads(detail["last_response_excerpt"]) == {"duplicate": True}


def test_forged_foreign_and_stale_deliveries_are_refused(client, auth, bootstrap_auth, shop):
    connection = connect_shop(client, shop, bootstrap_auth)
    create_order_invoice(client, bearer(connection["api_key"]), "wc-1001")
    [genuine] = run_workers(shop, 1)
    # A paid event for another order that Tender never sent, as an attacker would post it.
    event = json.loads(genuine.body)
    event.update(id="evt_" + "f" * 32, type="invoice.paid")
    event["data"]["object"].update(status="paid", external_order_id="wc-6666")
    body = json.dumps(event).encode()
    secret, integration_id = connection["webhook_secret"], connection["integration_public_id"]

    def headers(*, key=secret, integration=integration_id, timestamp=None):
        timestamp = int(time.time()) if timestamp is None else timestamp
        return {"Content-Type": "application/json", "X-Tender-Event-Id": event["id"],
                "X-Tender-Timestamp": str(timestamp), "X-Tender-Integration-Id": integration,
                "X-Tender-Signature": f"v1={sign(key, timestamp, body)}"}

    assert post(shop.url, headers(key="0" * 64), body) == (401, {"error": "signature does not match"})
    foreign = post(shop.url, headers(integration="int_" + "0" * 32), body)
    assert foreign[0] == 403 and "Integration-Id" in foreign[1]["error"]
    stale = post(shop.url, headers(timestamp=int(time.time()) - 301), body)
    assert stale[0] == 401 and "timestamp" in stale[1]["error"]
    tampered = body.replace(b"wc-6666", b"wc-7777")
    assert post(shop.url, headers(), tampered) == (401, {"error": "signature does not match"})
    assert "wc-6666" not in shop.paid_orders and event["id"] not in shop.events_acted_on
    # None of the refusals marked the event id as seen: correctly signed, it runs (once).
    assert post(shop.url, headers(), body) == (200, {"received": True})
    assert post(shop.url, headers(), body) == (200, {"duplicate": True})
    assert shop.paid_orders["wc-6666"] == 1


def test_after_reconnect_deliveries_verify_with_the_new_secret(client, auth, bootstrap_auth, shop):
    first = connect_shop(client, shop, bootstrap_auth)
    second = connect_shop(client, shop, bearer(first["api_key"]))
    invoice = create_order_invoice(client, bearer(second["api_key"]), "wc-2002")
    pay(client, auth, invoice["id"])
    exchanges = run_workers(shop, 4)
    assert [e.status for e in exchanges] == [200, 200, 200, 200]
    assert shop.paid_orders == {"wc-2002": 1}
    # The replaced secret still signs beside the new one for 24 hours (a second v1= value).
    [paid] = [e for e in exchanges if json.loads(e.body)["type"] == "invoice.paid"]
    timestamp = paid.headers["X-Tender-Timestamp"]
    assert paid.headers["X-Tender-Signature"] == (f"v1={sign(second['webhook_secret'], timestamp, paid.body)},"
                                                  f"v1={sign(first['webhook_secret'], timestamp, paid.body)}")
    assert paid.headers["X-Tender-Integration-Id"] == second["integration_public_id"] == first["integration_public_id"]


def test_after_disconnect_nothing_more_is_delivered(client, auth, bootstrap_auth, shop):
    connection = connect_shop(client, shop, bootstrap_auth)
    invoice = create_order_invoice(client, bearer(connection["api_key"]), "wc-3003")
    [created] = run_workers(shop, 1)
    pay(client, auth, invoice["id"])                       # its event is committed, not yet sent
    assert client.post(route("disconnect"), headers=bearer(connection["api_key"])).status_code == 200
    SimpleWorker([queues.queue(name) for name in queues.QUEUE_NAMES], connection=queues.redis()).work(burst=True)
    webhook_jobs.relay_outbox(older_than_seconds=0)
    webhook_jobs.deliver_due()
    assert len(shop.exchanges) == 1 and shop.paid_orders == {}
    with db.connection_context():
        assert not WebhookDelivery.select().where(WebhookDelivery.status == "pending").exists()
