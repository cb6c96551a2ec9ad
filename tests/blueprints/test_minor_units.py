"""Each currency's own minor units in payment links and refunds, whose currency is not always in the
request (a link's update and checkout, a refund of an invoice): JPY none, USD two, KWD three."""
from decimal import Decimal

import pytest

from tests import factories
from tests.blueprints.assertions import assert_error
from tests.payflow import run_pipeline


def test_a_link_in_yen_is_created_and_written_in_yen(client, auth):
    body = {"title": "Tea", "amount_mode": "customer_defined_amount", "min_amount": "500", "max_amount": "20000",
            "currency": "JPY"}
    created = client.post("/v1/payment-links", json=body, headers=auth)
    assert created.status_code == 201, created.json
    assert (created.json["min_amount"], created.json["max_amount"]) == ("500", "20000")
    refused = client.post("/v1/payment-links", json={**body, "min_amount": "500.0"}, headers=auth)
    assert_error(refused, 400, "validation_error", param="min_amount")


@pytest.mark.parametrize("field, value", [("amount", "30.5"), ("amount", "30.00")])
def test_a_link_update_is_held_to_the_links_currency(client, auth, store, field, value):
    link = factories.make_payment_link(store, currency="EUR", amount=Decimal("25"))
    link.currency = "JPY"
    link.save()
    response = client.patch(f"/v1/payment-links/{link.public_id}", json={field: value}, headers=auth)
    assert_error(response, 400, "validation_error", param=field)
    assert client.patch(f"/v1/payment-links/{link.public_id}", json={field: "30"}, headers=auth).json[field] == "30"


def test_a_checkout_amount_is_held_to_the_links_currency(client, store):
    link = factories.make_payment_link(store, amount_mode="customer_defined_amount", amount=None, currency="EUR")
    response = client.post(f"/v1/public/payment-links/{link.plpub_id}/checkout", json={"amount": "12.345"})
    assert_error(response, 400, "validation_error", param="amount")
    assert "EUR" in response.json["error"]["message"]


def test_a_yen_invoice_is_paid_and_refunded_in_whole_yen(client, auth):
    created = client.post("/v1/invoices", json={"amount": "1500", "currency": "JPY"}, headers=auth).json
    assert client.post(f"/v1/test_helpers/invoices/{created['id']}/pay", json={}, headers=auth).status_code == 202
    run_pipeline()
    invoice = client.get(f"/v1/invoices/{created['id']}", headers=auth).json
    assert (invoice["status"], invoice["amount"]) == ("paid", "1500")
    status = client.get(f"/v1/invoices/{created['id']}/status", headers=auth).json
    assert status["received_amount"] == "1500"
    assert "." not in status["paid_amount"] + status["difference_amount"]
    refused = client.post(f"/v1/invoices/{created['id']}/refunds", json={"amount": "100.5"}, headers=auth)
    assert_error(refused, 400, "validation_error", param="amount")
    assert "JPY" in refused.json["error"]["message"]
    too_much = client.post(f"/v1/invoices/{created['id']}/refunds", json={"amount": "1501"}, headers=auth)
    assert_error(too_much, 400, "refund_exceeds_refundable")
    assert "at most 1500 JPY" in too_much.json["error"]["message"]
    refund = client.post(f"/v1/invoices/{created['id']}/refunds", json={"amount": "100"}, headers=auth)
    assert refund.status_code == 201 and refund.json["amount"] == "100", refund.json


@pytest.mark.parametrize("currency", [{}, [], 840, True])
def test_a_currency_that_is_not_a_code_is_refused_by_name_beside_an_amount(client, auth, currency):
    """The amount's decimals depend on the currency beside it: a currency that is not even a string
    (found by the contract fuzzer as a 500) is the currency field's 400, never a crash."""
    link = client.post("/v1/payment-links", json={"title": "Tea", "amount_mode": "fixed_amount", "amount": "10",
                                                  "currency": currency}, headers=auth)
    assert_error(link, 400, "validation_error", param="currency")
    invoice = client.post("/v1/invoices", json={"amount": "10", "order_amount": "10", "order_currency": currency},
                          headers=auth)
    assert invoice.status_code == 400, invoice.json
    assert "order_currency" in invoice.get_data(as_text=True)
