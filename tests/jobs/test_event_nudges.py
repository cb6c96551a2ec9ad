"""Every path that writes an event nudges its fan-out once the transaction commits, and with a
real worker on the `webhooks` queue the receiver has the event at once (docs/webhooks.md).

No scheduler runs here, so no sweep would ever fan an event out: an event reaches the receiver only
if its commit nudged the worker. The wait is therefore a generous bound, not a latency goal (a
loaded CI machine once took over a second); latency is measured in bench/webhooks.py."""
import datetime as dt
import threading

import pytest
import redis
from rq import Queue

import jobs
from core.clock import utcnow
from infra import queues
from jobs import chain, maintenance, settlement
from models.base import db
from scheduler import embedded
from services.engine import invoice_states
from services.webhooks import outbox
from tests import factories
from tests.payflow import make_due, reload
from tests.support.polling import wait_for
from tests.support.receiver import Receiver
from tests.services.webhooks.test_delivery import make_endpoint

DELIVERY_STARTS_WITHIN = 30.0      # seconds: a bound for a loaded machine; without a nudge it never arrives


@pytest.fixture
def receiver(client, auth):
    with Receiver() as live:
        make_endpoint(client, auth, live.url("/hook"))
        yield live


@pytest.fixture
def webhooks_worker(app, settings):
    """A real RQ worker on `webhooks`, in a thread (the embedded runner's ThreadWorker)."""
    jobs.use_runtime(settings)
    stopping = threading.Event()
    # On real Redis the worker gets a connection of its own, as `rq worker` has: its blocking dequeue
    # outlasts the app client's 0.25 s read timeout (which would trip the app's breaker and send the
    # worker into RQ's reconnect back-off), and RQ raises the read timeout of the client it is given.
    connection = queues.redis() if settings.embedded_redis else redis.Redis.from_url(settings.redis_url)

    def work():
        while not stopping.is_set():      # a blocking dequeue: it wakes when a job is enqueued
            embedded.ThreadWorker([Queue("webhooks", connection=connection)], connection=connection).work(
                max_idle_time=1, logging_level="WARNING")

    thread = threading.Thread(target=work, name="test-webhooks-worker", daemon=True)
    thread.start()
    yield
    stopping.set()
    thread.join(10)
    if connection is not queues.redis():
        connection.close()


def _received(receiver, event_type):
    return lambda: any(f'"type": "{event_type}"' in r.body.decode() or f'"type":"{event_type}"' in r.body.decode()
                       for r in receiver.requests)


def _delivered_soon(receiver, event_type):
    wait_for(_received(receiver, event_type), timeout=DELIVERY_STARTS_WITHIN, interval=0.01,
             what=f"{event_type} at the receiver")


def _create(client, auth, **body):
    response = client.post("/v1/invoices", json={"amount": "10.00", **body}, headers=auth)
    assert response.status_code == 201, response.json
    return response.json


def _paid_invoice(client, auth, store):
    """An invoice the chain poller has just moved to paid (its move ran inside poll_invoice's transaction)."""
    invoice = factories.make_invoice(store)
    assert client.post(f"/v1/test_helpers/invoices/{invoice.public_id}/pay", json={},
                       headers=auth).status_code == 202
    for _ in range(4):
        if reload(invoice).status == "paid":
            break
        make_due(invoice)
        chain.poll_deposits()
    assert reload(invoice).status == "paid"
    return invoice


def test_api_create(client, auth, receiver, webhooks_worker):
    _create(client, auth)
    _delivered_soon(receiver, "invoice.created")


def test_payment_link_checkout(client, store, auth, receiver, webhooks_worker):
    link = factories.make_payment_link(store)
    response = client.post(f"/v1/public/payment-links/{link.plpub_id}/checkout", json={})
    assert response.status_code == 201, response.json
    _delivered_soon(receiver, "invoice.created")


def test_integration_create(client, store, auth, receiver, webhooks_worker):
    from tests.services.integrations.conftest import bearer, connect

    installation = connect(client, bearer(factories.make_key(store, kind="bootstrap")),
                           webhook_url=receiver.url("/shop"))
    _create(client, bearer(installation["api_key"]), external_order_id="order-1")
    _delivered_soon(receiver, "invoice.created")


def test_quote_commit(client, auth, receiver, webhooks_worker):
    invoice = _create(client, auth)
    response = client.post(f"/v1/public/invoices/{invoice['id']}/quote",
                           json={"origin_asset": "xlm", "refund_to": "GBUYER", "dry": False})
    assert response.status_code == 200, response.json
    _delivered_soon(receiver, "invoice.awaiting_payment")


def test_poll_move_and_settlement(client, store, auth, receiver, webhooks_worker):
    invoice = _paid_invoice(client, auth, store)
    _delivered_soon(receiver, "invoice.paid")
    make_due(invoice)
    assert settlement.poll_settlements() == 1
    _delivered_soon(receiver, "invoice.settled")


def test_expiry(client, store, receiver, webhooks_worker):
    factories.make_invoice(store, expires_at=utcnow() - dt.timedelta(seconds=1))
    assert maintenance.sweep_expired_invoices() == 1
    _delivered_soon(receiver, "invoice.expired")


def test_cancel(client, auth, receiver, webhooks_worker):
    invoice = _create(client, auth)
    assert client.post(f"/v1/invoices/{invoice['id']}/cancel", headers=auth).status_code == 200
    _delivered_soon(receiver, "invoice.cancelled")


def _fan_out_jobs():
    return [job.func_name for job in queues.queue("webhooks").jobs].count(outbox.FAN_OUT_JOB)


def test_a_move_inside_a_callers_transaction_nudges_after_that_commit(app, store):
    """Polls apply their moves inside a transaction (services/engine/polling.py): the fan-out nudge waits
    for the outermost commit, and a rollback takes the nudge away with the event."""
    invoices = [factories.make_invoice(store) for _ in range(2)]
    queues.redis().flushdb()
    with db.connection_context():
        with pytest.raises(RuntimeError), db.atomic():
            assert invoice_states.move(invoices[0].id, "cancel", now=utcnow()) is not None
            raise RuntimeError("the caller rolls back")
        assert _fan_out_jobs() == 0 and reload(invoices[0]).status == "pending"
        with db.atomic():
            for invoice in invoices:
                assert invoice_states.move(invoice.id, "cancel", now=utcnow()) is not None
            assert _fan_out_jobs() == 0                     # not before the commit
    assert _fan_out_jobs() == 1                             # one run for both events
