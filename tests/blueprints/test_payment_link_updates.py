"""PATCH, activate/deactivate, and the link's invoices and transactions (docs/payment-links.md)."""
from decimal import Decimal

import pytest

from core.clock import utcnow
from models.base import db
from models.invoices import Invoice
from models.payment_links import PaymentLink
from services.engine import invoice_states
from tests import factories

SUMMARY_FIELDS = ["id", "status", "amount", "currency", "paid_amount", "created_at", "paid_at"]


def patch(client, auth, link, body):
    return client.patch(f"/v1/payment-links/{link.public_id}", json=body, headers=auth)


def start_checkout(client, link, body=None):
    response = client.post(f"/v1/public/payment-links/{link.plpub_id}/checkout", json=body or {})
    assert response.status_code == 201, response.json
    return response.json["invoice_id"]


def test_patch_changes_only_the_fields_sent(client, auth, store):
    link = factories.make_payment_link(store)
    response = patch(client, auth, link, {"title": "Hoodie", "public_visible": False})
    assert response.status_code == 200, response.json
    assert (response.json["title"], response.json["public_visible"]) == ("Hoodie", False)
    assert (response.json["amount"], response.json["allow_multiple_payments"]) == ("25.00", True)
    assert response.json["id"] == link.public_id
    assert patch(client, auth, link, {}).json == client.get(f"/v1/payment-links/{link.public_id}",
                                                            headers=auth).json


def test_patch_usage_and_pricing_before_any_checkout(client, auth, store):
    link = factories.make_payment_link(store)
    changed = patch(client, auth, link, {"allow_multiple_payments": False, "amount": "30.00"}).json
    assert (changed["usage"], changed["amount"]) == ("single_use", "30.00")
    switched = patch(client, auth, link, {"amount_mode": "customer_defined_amount", "min_amount": "2"}).json
    assert (switched["amount_mode"], switched["amount"], switched["min_amount"], switched["max_amount"]) == (
        "customer_defined_amount", None, "2.00", None)
    cleared = patch(client, auth, link, {"min_amount": None, "max_amount": "9"}).json
    assert (cleared["min_amount"], cleared["max_amount"]) == (None, "9.00")
    back = patch(client, auth, link, {"amount_mode": "fixed_amount", "amount": "7.50"}).json
    assert (back["amount"], back["min_amount"], back["max_amount"]) == ("7.50", None, None)


@pytest.mark.parametrize("body, param", [
    ({"amount": 30}, "amount"),
    ({"amount": None}, "amount"),
    ({"min_amount": "1.00"}, "min_amount"),
    ({"amount_mode": "customer_defined_amount", "amount": "5.00"}, "amount"),
    ({"amount_mode": "customer_defined_amount", "min_amount": "9", "max_amount": "8"}, "max_amount"),
    ({"amount_mode": "flexible"}, "amount_mode"),
    ({"title": ""}, "title"),
    ({"title": None}, "title"),
    ({"allow_multiple_payments": "false"}, "allow_multiple_payments"),
    ({"currency": "EUR"}, "currency"),
    ({"status": "inactive"}, "status"),
    ({"public_id": "plpub_" + "0" * 32}, "public_id"),
])
def test_patch_refuses_bad_bodies(client, auth, store, body, param):
    link = factories.make_payment_link(store)
    response = patch(client, auth, link, body)
    assert response.status_code == 400, response.json
    assert (response.json["error"]["code"], response.json["error"]["param"]) == ("validation_error", param)
    with db.connection_context():
        assert PaymentLink.get_by_id(link.id).updated_at == link.updated_at


def test_patch_checks_merged_bounds(client, auth, store):
    link = factories.make_payment_link(store, amount_mode="customer_defined_amount", amount=None,
                                       min_amount=Decimal("5"), max_amount=Decimal("50"))
    response = patch(client, auth, link, {"min_amount": "60"})
    assert (response.status_code, response.json["error"]["param"]) == (400, "max_amount")


def test_pricing_is_locked_once_a_checkout_started(client, auth, store):
    link = factories.make_payment_link(store)
    start_checkout(client, link)
    for body, param in [({"amount": "26.00"}, "amount"),
                        ({"amount_mode": "customer_defined_amount"}, "amount_mode"),
                        ({"amount_mode": "customer_defined_amount", "min_amount": "1"}, "amount_mode")]:
        response = patch(client, auth, link, body)
        assert response.status_code == 400, body
        assert (response.json["error"]["code"], response.json["error"]["param"]) == ("pricing_locked", param)
    same_price = patch(client, auth, link, {"amount": "25.0", "amount_mode": "fixed_amount", "title": "Renamed"})
    assert same_price.status_code == 200 and same_price.json["title"] == "Renamed"
    assert patch(client, auth, link, {"allow_multiple_payments": False}).json["usage"] == "single_use"
    with db.connection_context():
        assert PaymentLink.get_by_id(link.id).amount == Decimal("25.00")


def test_a_refused_checkout_does_not_lock_pricing(client, auth, store):
    link = factories.make_payment_link(store)
    client.post(f"/v1/public/payment-links/{link.plpub_id}/checkout", json={"amount": "1.00"})
    assert patch(client, auth, link, {"amount": "26.00"}).status_code == 200


def test_activate_and_deactivate(client, auth, store):
    link = factories.make_payment_link(store)
    for action, status in [("deactivate", "inactive"), ("deactivate", "inactive"), ("activate", "active"),
                           ("activate", "active")]:
        response = client.post(f"/v1/payment-links/{link.public_id}/{action}", headers=auth)
        assert (response.status_code, response.json["status"]) == (200, status), action


def test_a_completed_link_cannot_be_activated_or_reopened(client, auth, store):
    link = factories.make_payment_link(store, allow_multiple_payments=False)
    with db.connection_context():
        PaymentLink.update(status="completed").where(PaymentLink.id == link.id).execute()
    refused = client.post(f"/v1/payment-links/{link.public_id}/activate", headers=auth)
    assert (refused.status_code, refused.json["error"]["code"]) == (400, "activation_refused")
    assert client.post(f"/v1/payment-links/{link.public_id}/deactivate", headers=auth).json["status"] == "completed"
    reopened = patch(client, auth, link, {"allow_multiple_payments": True})
    assert (reopened.status_code, reopened.json["error"]["code"]) == (400, "activation_refused")
    assert patch(client, auth, link, {"title": "Sold"}).json["status"] == "completed"


def test_invoice_summaries_of_a_link(client, auth, store):
    link = factories.make_payment_link(store)
    other_link = factories.make_payment_link(store)
    ids = [start_checkout(client, link) for _ in range(3)]
    start_checkout(client, other_link)
    factories.make_invoice(store)
    now = utcnow()
    with db.connection_context():
        paid = Invoice.get(Invoice.public_id == ids[0])
        invoice_states.move(paid.id, "commit_quote", now=now, deposit_address="d")
        invoice_states.move(paid.id, "deposit_confirmed", now=now, paid_at=now, paid_amount=Decimal("25.00"))
    page = client.get(f"/v1/payment-links/{link.public_id}/invoices?limit=2", headers=auth).json
    assert page["has_more"] is True and page["next_cursor"] == page["data"][-1]["id"]
    rest = client.get(f"/v1/payment-links/{link.public_id}/invoices?limit=2&starting_after={page['next_cursor']}",
                      headers=auth).json
    items = page["data"] + rest["data"]
    assert rest["has_more"] is False
    assert sorted(item["id"] for item in items) == sorted(ids)
    assert all(list(item) == SUMMARY_FIELDS for item in items)
    paid_item = next(item for item in items if item["id"] == ids[0])
    assert (paid_item["status"], paid_item["paid_amount"], paid_item["amount"]) == ("paid", "25.00", "25.00")
    assert paid_item["paid_at"].endswith("Z")
    foreign = start_checkout(client, other_link)
    bad = client.get(f"/v1/payment-links/{link.public_id}/invoices?starting_after={foreign}", headers=auth)
    assert (bad.status_code, bad.json["error"]["code"]) == (400, "invalid_cursor")
    assert client.get(f"/v1/payment-links/{link.public_id}/invoices?limit=0", headers=auth).status_code == 400


def test_transactions_of_a_link(client, auth, store, other_store):
    link = factories.make_payment_link(store)
    first_id, second_id = start_checkout(client, link), start_checkout(client, link)
    with db.connection_context():
        first, second = (Invoice.get(Invoice.public_id == i) for i in (first_id, second_id))
    ours = [factories.make_transaction(first), factories.make_transaction(second, type="settlement")]
    factories.make_transaction(factories.make_invoice(store))
    factories.make_transaction(factories.make_invoice(other_store))
    response = client.get(f"/v1/payment-links/{link.public_id}/transactions", headers=auth)
    assert response.status_code == 200
    body = response.json
    assert (body["has_more"], body["next_cursor"]) == (False, None)
    assert sorted(item["id"] for item in body["data"]) == sorted(txn.public_id for txn in ours)
    by_id = {item["id"]: item for item in body["data"]}
    assert by_id[ours[0].public_id]["invoice_id"] == first.public_id
    assert by_id[ours[1].public_id]["type"] == "settlement"
    single = client.get(f"/v1/transactions/{ours[0].public_id}", headers=auth).json
    assert by_id[ours[0].public_id] == single          # the same TransactionSchema
    page = client.get(f"/v1/payment-links/{link.public_id}/transactions?limit=1", headers=auth).json
    assert page["has_more"] is True and len(page["data"]) == 1


def test_another_stores_checkouts_never_show_up(client, auth, other_auth, store, other_store):
    theirs = factories.make_payment_link(other_store)
    start_checkout(client, theirs)
    for suffix in ("", "/invoices", "/transactions"):
        assert client.get(f"/v1/payment-links/{theirs.public_id}{suffix}", headers=auth).status_code == 404
    assert client.get(f"/v1/payment-links/{theirs.public_id}/invoices", headers=other_auth).json["data"]
