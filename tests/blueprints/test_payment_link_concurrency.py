"""Concurrency on the real database: 20 requests at once, each on its own thread and its own
pooled PostgreSQL connection (peewee connections are per thread), released together by a barrier."""
import dataclasses
import threading

import pytest

from models.base import db, is_postgres
from models.events import Event
from models.invoices import Invoice
from models.payment_links import PaymentLink
from tests import factories

CONCURRENCY = 20


@pytest.fixture(autouse=True)
def _real_database_only(app):
    if not is_postgres():
        pytest.skip("needs real concurrent connections: set TEST_DATABASE_URL to PostgreSQL "
                    "(SQLite serialises every writer, so there is no race to test)")


@pytest.fixture(autouse=True)
def _no_rate_limits(app, settings, monkeypatch):
    # 20 checkouts of one token in a second is past the per-token limit; these tests are about
    # locking, so limits are off here (tests/blueprints/test_rate_limits.py covers them).
    monkeypatch.setitem(app.extensions, "tender.settings", dataclasses.replace(
        settings, rate_limit_public_mode="off", rate_limit_write_mode="off"))


def run_at_once(app, request):
    """Run `request(client)` on CONCURRENCY threads at the same moment; return the responses."""
    barrier = threading.Barrier(CONCURRENCY)
    responses, errors = [None] * CONCURRENCY, []

    def worker(index):
        client = app.test_client()
        try:
            barrier.wait(timeout=30)
            responses[index] = request(client)
        except Exception as error:   # surfaced below: a thread's failure must fail the test
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(CONCURRENCY)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert all(response is not None for response in responses)
    return responses


def test_concurrent_checkouts_of_a_single_use_link_make_one_invoice(app, store):
    link = factories.make_payment_link(store, allow_multiple_payments=False)
    responses = run_at_once(app, lambda client: client.post(
        f"/v1/public/payment-links/{link.plpub_id}/checkout", json={}))
    assert [r.status_code for r in responses] == [201] * CONCURRENCY, [r.json for r in responses]
    assert len({r.json["invoice_id"] for r in responses}) == 1
    assert sorted(r.json["reused"] for r in responses) == [False] + [True] * (CONCURRENCY - 1)
    with db.connection_context():
        invoices = list(Invoice.select().where(Invoice.payment_link_id == link.public_id))
        assert len(invoices) == 1
        assert Event.select().where(Event.invoice == invoices[0].id).count() == 1


def test_concurrent_checkouts_of_a_reusable_link_make_one_invoice_each(app, store):
    link = factories.make_payment_link(store)
    responses = run_at_once(app, lambda client: client.post(
        f"/v1/public/payment-links/{link.plpub_id}/checkout", json={}))
    assert {r.status_code for r in responses} == {201}
    assert len({r.json["invoice_id"] for r in responses}) == CONCURRENCY
    with db.connection_context():
        assert Invoice.select().where(Invoice.payment_link_id == link.public_id).count() == CONCURRENCY


def test_concurrent_creates_with_one_idempotency_key_make_one_link(app, store, auth):
    body = {"title": "Launch", "amount_mode": "fixed_amount", "amount": "10.00"}
    responses = run_at_once(app, lambda client: client.post(
        "/v1/payment-links", json=body, headers={**auth, "Idempotency-Key": "launch-day"}))
    statuses = [r.status_code for r in responses]
    assert set(statuses) <= {201, 409}, [r.json for r in responses]
    created = [r for r in responses if r.status_code == 201]
    assert len({r.json["id"] for r in created}) == 1
    assert sum(1 for r in created if r.headers.get("Idempotent-Replayed") != "true") == 1
    assert all(r.json["error"]["code"] == "idempotency_key_in_use" for r in responses if r.status_code == 409)
    with db.connection_context():
        assert [link.public_id for link in PaymentLink.select()] == [created[0].json["id"]]
