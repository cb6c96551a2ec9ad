"""POST /v1/invoices/{id}/cancel (docs/payment-engine.md): open and no deposit seen; never an integration key."""
import pytest

from core.clock import utcnow
from models.events import Event
from models.invoices import Invoice
from tests import factories
from tests.blueprints.assertions import INVOICE_FIELDS, assert_error


def cancel(client, auth, invoice):
    return client.post(f"/v1/invoices/{invoice.public_id}/cancel", headers=auth)


def cancelled_events():
    return Event.select().where(Event.type == "invoice.cancelled").count()


@pytest.mark.parametrize("status", ["pending", "quoted", "awaiting_payment"])
def test_open_invoice_is_cancelled_with_its_event(client, auth, store, status):
    invoice = factories.make_invoice(store, status=status)
    response = cancel(client, auth, invoice)
    assert response.status_code == 200
    body = response.get_json()
    assert set(body) == INVOICE_FIELDS
    assert (body["id"], body["status"]) == (invoice.public_id, "cancelled")
    row = Invoice.get_by_id(invoice.id)
    assert row.status == "cancelled"
    assert row.updated_at >= invoice.updated_at
    event = Event.get(Event.type == "invoice.cancelled")
    assert event.invoice_id == invoice.id and event.store_id == store.id
    assert event.payload["data"]["object"]["status"] == "cancelled"


@pytest.mark.parametrize("status", ["paid", "underpaid", "expired", "failed", "refunded", "cancelled"])
def test_invoice_that_is_not_open_is_not_cancellable(client, auth, store, status):
    invoice = factories.make_invoice(store, status=status)
    assert_error(cancel(client, auth, invoice), 400, "invoice_not_cancellable")
    assert Invoice.get_by_id(invoice.id).status == status
    assert cancelled_events() == 0


def test_invoice_whose_deposit_was_seen_is_not_cancellable(client, auth, store):
    invoice = factories.make_invoice(store, status="awaiting_payment", deposit_seen_at=utcnow(),
                                     deposit_address="0xaddr")
    assert_error(cancel(client, auth, invoice), 400, "invoice_not_cancellable")
    assert Invoice.get_by_id(invoice.id).status == "awaiting_payment"
    assert cancelled_events() == 0


def test_second_cancel_is_refused_and_writes_no_second_event(client, auth, store):
    invoice = factories.make_invoice(store)
    assert cancel(client, auth, invoice).status_code == 200
    assert_error(cancel(client, auth, invoice), 400, "invoice_not_cancellable")
    assert cancelled_events() == 1


@pytest.mark.parametrize("key, code", [
    ({"kind": "integration"}, "integration_key_forbidden"),     # said before the scope is even looked at
    ({"scopes": ["invoices:read"]}, "INSUFFICIENT_SCOPE"),
], ids=["integration key", "key without invoices:write"])
def test_keys_that_may_not_cancel_are_refused_and_change_nothing(client, store, key, code):
    invoice = factories.make_invoice(store)
    auth = {"Authorization": f"Bearer {factories.make_key(store, **key)}"}
    assert_error(cancel(client, auth, invoice), 403, code)
    assert Invoice.get_by_id(invoice.id).status == "pending"
    assert cancelled_events() == 0


def test_cancelled_invoice_reads_back_cancelled(client, auth, store):
    invoice = factories.make_invoice(store)
    cancelled = cancel(client, auth, invoice).get_json()
    assert client.get(f"/v1/invoices/{invoice.public_id}", headers=auth).get_json() == cancelled
