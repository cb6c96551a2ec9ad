"""How a batch of delivery results is written: an attempt for each result whose claim still holds, none
for the others, with no transaction unless an endpoint's health may change (on PostgreSQL the
results and attempts are one statement); and a result survives one lost database connection
(docs/webhooks.md): record() retries the write once on a fresh connection instead of abandoning the
claim, after which the delivery would be sent a second time (PostgreSQL only: the connection is cut
by pg_terminate_backend)."""
import contextlib

import pytest

from core.clock import utcnow
from models.base import db, is_postgres
from models.events import Event
from models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from services.webhooks import delivery_claim, delivery_results, outbox, webhook_sending
from tests.services.webhooks.test_delivery import create_invoice, make_endpoint


@contextlib.contextmanager
def _statements_sent():
    """The statements this thread's connection sends meanwhile, BEGIN and COMMIT among them
    (PostgreSQL: its cursors record them; SQLite: nothing recorded)."""
    sent = []
    if not is_postgres():
        yield sent
        return
    import psycopg2.extensions

    class Recording(psycopg2.extensions.cursor):
        def execute(self, query, params=None):
            sent.append(" ".join(query.split()))
            return super().execute(query, params)

    connection = db.connection()
    before, connection.cursor_factory = connection.cursor_factory, Recording
    try:
        yield sent
    finally:
        connection.cursor_factory = before


def _claimed(client, auth, receiver, policy, invoices: int) -> list[webhook_sending.Work]:
    """The claimed first deliveries of `invoices` new invoices to one endpoint."""
    make_endpoint(client, auth, receiver.url("/hook"))
    for number in range(invoices):
        create_invoice(client, auth, external_order_id=f"ord-{number}")
    with db.connection_context():
        for event in Event.select():
            outbox.fan_out(event.id, now=utcnow())
        return delivery_claim.claim_due(policy, now=utcnow(), limit=10)


def test_each_result_still_claimed_gets_one_attempt_written_with_it_without_a_transaction(
        app, client, auth, receiver, policy):
    work = _claimed(client, auth, receiver, policy, 3)
    with db.connection_context():
        lost = work[0]
        WebhookDelivery.update(claim_token="taken-over-by-another").where(
            WebhookDelivery.id == lost.delivery_id).execute()
        now = utcnow()
        outcomes = [webhook_sending.Outcome(each, now, ok=True, status_code=200, latency_ms=3) for each in work]
        counts = delivery_results.RunCounts()
        with _statements_sent() as sent:
            delivery_results.record(outcomes, policy, now=now, counts=counts)
        if is_postgres():
            from psycopg2.extensions import TRANSACTION_STATUS_IDLE

            # One statement in autocommit, committed on its own: no BEGIN, no COMMIT, nothing left open.
            assert [statement.split()[0] for statement in sent] == ["WITH"]
            assert db.connection().get_transaction_status() == TRANSACTION_STATUS_IDLE
        # Written again (a retried write), the batch adds nothing: the written claims are cleared.
        again = delivery_results.RunCounts()
        delivery_results.record(outcomes, policy, now=now, counts=again)
        attempts = sorted((attempt.delivery_id, attempt.number, attempt.outcome) for attempt in WebhookAttempt.select())
        lost_row = WebhookDelivery.get_by_id(lost.delivery_id)
    assert counts.succeeded == 2 and counts.outcomes == outcomes[1:]
    assert attempts == sorted((each.delivery_id, each.number, "succeeded") for each in work[1:])
    assert lost_row.claim_token == "taken-over-by-another" and lost_row.status == "pending"
    assert again.succeeded == again.failed_attempts == 0 and again.outcomes == []


def test_a_result_that_may_change_its_endpoints_health_is_written_with_it_in_one_transaction(
        app, client, auth, receiver, policy):
    [work] = _claimed(client, auth, receiver, policy, 1)
    with db.connection_context():
        now = utcnow()
        failed = webhook_sending.Outcome(work, now, ok=False, status_code=503, latency_ms=3, error="HTTP 503")
        with _statements_sent() as sent:
            delivery_results.record([failed], policy, now=now, counts=delivery_results.RunCounts())
        endpoint = WebhookEndpoint.get_by_id(work.endpoint_id)
        [attempt] = WebhookAttempt.select()
    assert endpoint.failing_since == now and attempt.outcome == "failed"
    if is_postgres():
        assert [statement.split()[0] for statement in sent] == ["BEGIN", "WITH", "UPDATE", "COMMIT"]


def _terminate_this_connection() -> None:
    import psycopg2

    pid = db.execute_sql("SELECT pg_backend_pid()").fetchone()[0]
    params = db.obj.connect_params
    other = psycopg2.connect(dbname=db.obj.database, **params)
    try:
        other.autocommit = True
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", (pid,))
    finally:
        other.close()


def test_a_result_written_on_a_lost_connection_is_written_again_once(app, client, auth, receiver, policy):
    if not is_postgres():
        pytest.skip("cuts a PostgreSQL connection (TEST_DATABASE_URL)")
    make_endpoint(client, auth, receiver.url("/hook"))
    create_invoice(client, auth)
    with db.connection_context():
        outbox.fan_out(Event.get().id, now=utcnow())
        [work] = delivery_claim.claim_due(policy, now=utcnow(), limit=10)
        now = utcnow()
        outcome = webhook_sending.Outcome(work, now, ok=True, status_code=200, latency_ms=3, excerpt="ok")
        _terminate_this_connection()
        counts = delivery_results.RunCounts()
        delivery_results.record([outcome], policy, now=now, counts=counts)
    with db.connection_context():
        delivery = WebhookDelivery.get_by_id(work.delivery_id)
        assert (delivery.status, delivery.claim_token, delivery.succeeded_at) == ("succeeded", None, now)
        assert [attempt.outcome for attempt in WebhookAttempt.select()] == ["succeeded"]
    assert counts.succeeded == 1 and counts.outcomes == [outcome]
