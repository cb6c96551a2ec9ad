"""A delivery's result survives one lost database connection (docs/webhooks.md): record() retries the
write once on a fresh connection instead of abandoning the claim, after which the delivery would be
sent a second time. PostgreSQL only: the connection is cut by pg_terminate_backend."""
import pytest

from core.clock import utcnow
from models.base import db, is_postgres
from models.events import Event
from models.webhooks import WebhookAttempt, WebhookDelivery
from services.webhooks import outbox, webhook_delivery, webhook_sending
from tests.services.webhooks.test_delivery import create_invoice, make_endpoint


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
        [work] = webhook_delivery.claim_due(policy, now=utcnow(), limit=10)
        now = utcnow()
        outcome = webhook_sending.Outcome(work, now, ok=True, status_code=200, latency_ms=3, excerpt="ok")
        _terminate_this_connection()
        counts = webhook_delivery.RunCounts()
        webhook_delivery.record([outcome], policy, now=now, counts=counts)
    with db.connection_context():
        delivery = WebhookDelivery.get_by_id(work.delivery_id)
        assert (delivery.status, delivery.claim_token, delivery.succeeded_at) == ("succeeded", None, now)
        assert [attempt.outcome for attempt in WebhookAttempt.select()] == ["succeeded"]
    assert counts.succeeded == 1 and counts.outcomes == [outcome]
