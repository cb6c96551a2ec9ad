"""GET /v1/invoices/{id} and /status; ids that are malformed or another store's are a 404."""
import datetime as dt
from decimal import Decimal
import uuid

import pytest

from core.clock import utcnow
from models.invoices import Invoice
from tests import factories
from tests.blueprints.assertions import INVOICE_FIELDS, STATUS_FIELDS, TIMESTAMP, assert_error

ROUTES = [("get", "/v1/invoices/{}"), ("get", "/v1/invoices/{}/status"),
          ("post", "/v1/invoices/{}/cancel"), ("get", "/v1/invoices/{}/transactions")]


def test_invoice_has_every_documented_field_with_null_for_unknown_values(client, auth, store):
    invoice = factories.make_invoice(store)
    body = client.get(f"/v1/invoices/{invoice.public_id}", headers=auth).get_json()
    assert set(body) == INVOICE_FIELDS
    assert body["id"] == invoice.public_id
    assert (body["status"], body["amount"], body["currency"]) == ("pending", "10.00", "USD")
    assert body["checkout_url"] == body["payment_url"] == f"http://tender.test/checkout/{invoice.public_id}"
    for field in ("external_order_id", "paid_amount", "return_url", "customer_id", "payment_link_id",
                  "transaction_hash", "metadata", "paid_at"):
        assert body[field] is None, field
    for field in ("created_at", "updated_at", "expires_at"):
        assert TIMESTAMP.match(body[field]), field


def test_a_paid_invoice_shows_what_the_engine_recorded(client, auth, store):
    paid_at = dt.datetime(2026, 3, 1, 12, 30, 15, 123456)
    customer = uuid.uuid4()
    invoice = factories.make_invoice(
        store, status="paid", paid_amount=Decimal("10.5"), paid_at=paid_at, transaction_hash="0xabc",
        customer_id=customer, payment_link_id="plink_" + "a" * 32, external_order_id="A-1",
        return_url="https://shop.example/done")
    body = client.get(f"/v1/invoices/{invoice.public_id}", headers=auth).get_json()
    assert body["status"] == "paid"
    assert body["paid_amount"] == "10.50"
    assert body["paid_at"] == "2026-03-01T12:30:15Z"
    assert body["transaction_hash"] == "0xabc"
    assert body["customer_id"] == str(customer)
    assert body["payment_link_id"] == "plink_" + "a" * 32
    assert (body["external_order_id"], body["return_url"]) == ("A-1", "https://shop.example/done")


def test_status_object_of_an_open_invoice_is_all_null_but_id_and_status(client, auth, store):
    invoice = factories.make_invoice(store)
    body = client.get(f"/v1/invoices/{invoice.public_id}/status", headers=auth).get_json()
    assert set(body) == STATUS_FIELDS
    assert (body["id"], body["status"]) == (invoice.public_id, "pending")
    assert all(body[field] is None for field in STATUS_FIELDS - {"id", "status"}), body


def test_status_object_while_funds_are_converted(client, auth, store):
    invoice = factories.make_invoice(
        store, status="paid", swap_status="processing", paid_amount=Decimal("10.00"),
        paid_at=dt.datetime(2026, 3, 1, 12, 0, 0), transaction_hash="0xdeposit", deposit_address="0xaddr",
        deposit_memo="memo-7", return_url="https://shop.example/done", payout_amount=Decimal("10.000000"),
        fee_bps=0)
    body = client.get(f"/v1/invoices/{invoice.public_id}/status", headers=auth).get_json()
    assert body == {
        "id": invoice.public_id, "status": "paid", "swap_status": "processing", "paid_amount": "10.00",
        "received_amount": None, "difference_amount": None, "transaction_hash": "0xdeposit",
        "paid_at": "2026-03-01T12:00:00Z", "deposit_address": "0xaddr", "deposit_memo": "memo-7",
        "return_url": "https://shop.example/done", "exchange_rate": None, "payout_amount": "10.00",
        "fee_bps": 0, "fee_amount": None,
    }


def test_status_object_after_settlement_has_received_and_negative_difference(client, auth, store):
    invoice = factories.make_invoice(
        store, status="paid", paid_amount=Decimal("10.00"), received_amount=Decimal("9.7"),
        difference_amount=Decimal("-0.3"), paid_at=utcnow())
    body = client.get(f"/v1/invoices/{invoice.public_id}/status", headers=auth).get_json()
    assert body["swap_status"] is None
    assert (body["paid_amount"], body["received_amount"], body["difference_amount"]) == ("10.00", "9.70", "-0.30")


def test_status_is_readable_with_invoices_read_alone(client, store):
    invoice = factories.make_invoice(store)
    auth = {"Authorization": f"Bearer {factories.make_key(store, scopes=['invoices:read'])}"}
    assert client.get(f"/v1/invoices/{invoice.public_id}/status", headers=auth).status_code == 200


@pytest.mark.parametrize("method, route", ROUTES)
@pytest.mark.parametrize("bad_id", [
    "txn_" + "a" * 32,             # another resource's prefix
    "plink_" + "a" * 32,
    "inv_" + "A" * 32,             # upper case
    "inv_" + "a" * 19,             # too short
    "inv_" + "a" * 33,             # too long
    "inv_" + "-" * 32,
    "inv" + "a" * 32,
    "12345",
    "inv_" + "0" * 32,             # well formed, unknown
])
def test_malformed_or_unknown_ids_are_invoice_not_found(client, auth, store, method, route, bad_id):
    factories.make_invoice(store)
    response = getattr(client, method)(route.format(bad_id), headers=auth)
    assert_error(response, 404, "invoice_not_found")


@pytest.mark.parametrize("method, route", ROUTES)
def test_the_internal_uuid_does_not_resolve(client, auth, store, method, route):
    invoice = factories.make_invoice(store)
    assert_error(getattr(client, method)(route.format(invoice.id), headers=auth), 404, "invoice_not_found")


@pytest.mark.parametrize("method, route", ROUTES)
def test_another_stores_invoice_is_not_found(client, auth, other_store, method, route):
    theirs = factories.make_invoice(other_store)
    response = getattr(client, method)(route.format(theirs.public_id), headers=auth)
    assert_error(response, 404, "invoice_not_found")
    assert Invoice.get_by_id(theirs.id).status == "pending"
