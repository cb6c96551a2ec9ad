"""Buyer routes of payment links: the buyer view and checkout (spec "Payment links (buyer)",
checkout rules 1-4, docs/payment-links.md)."""
import datetime as dt
from decimal import Decimal

import pytest

from core.clock import utcnow
from models.base import db
from models.events import Event
from models.invoices import Invoice
from models.payment_links import PaymentLink
from services.accounts import stores
from services.engine import invoice_states
from tests import factories

PUBLIC_FIELDS = ["public_id", "title", "amount_mode", "amount", "min_amount", "max_amount", "currency", "usage",
                 "status", "store_name", "merchant_name"]


def checkout(client, link_or_token, body=None):
    token = link_or_token if isinstance(link_or_token, str) else link_or_token.plpub_id
    return client.post(f"/v1/public/payment-links/{token}/checkout", json=body if body is not None else {})


def invoices_of(link):
    with db.connection_context():
        return list(Invoice.select().where(Invoice.payment_link_id == link.public_id).order_by(Invoice.created_at))


def set_status(link, status):
    with db.connection_context():
        PaymentLink.update(status=status).where(PaymentLink.id == link.id).execute()


def pay(invoice_public_id):
    """Drive the invoice to `paid` through the real state machine (as the engine will)."""
    now = utcnow()
    with db.connection_context():
        invoice = Invoice.get(Invoice.public_id == invoice_public_id)
        if invoice.status == "pending":
            invoice_states.move(invoice.id, "commit_quote", now=now, deposit_address="dep-1")
        assert invoice_states.move(invoice.id, "deposit_confirmed", now=now, paid_at=now,
                                   paid_amount=invoice.amount) is not None


def test_buyer_view_has_only_buyer_safe_fields(client, store):
    link = factories.make_payment_link(store, amount_mode="customer_defined_amount", amount=None,
                                       min_amount=Decimal("5"), max_amount=Decimal("50"), allow_multiple_payments=False)
    response = client.get(f"/v1/public/payment-links/{link.plpub_id}")
    assert response.status_code == 200
    assert list(response.json) == PUBLIC_FIELDS
    assert response.json == {
        "public_id": link.plpub_id, "title": "T-shirt", "amount_mode": "customer_defined_amount", "amount": None,
        "min_amount": "5.00", "max_amount": "50.00", "currency": "USD", "usage": "single_use", "status": "active",
        "store_name": "Test shop", "merchant_name": "Test shop"}
    text = response.get_data(as_text=True)
    for secret in (str(store.id), store.payout_wallet, store.callback_secret, link.public_id, str(link.id)):
        assert secret not in text


@pytest.mark.parametrize("token", ["plpub_" + "0" * 32, "plpub_" + "0" * 12, "plpub_ABCDEF123456", "plpub_short",
                                   "plpub_" + "a" * 20, "plink_" + "a" * 32, "inv_" + "a" * 32, "x"])
def test_unknown_or_malformed_tokens_are_404(client, store, token):
    factories.make_payment_link(store)
    for response in (client.get(f"/v1/public/payment-links/{token}"), checkout(client, token)):
        assert response.status_code == 404
        assert response.json["error"] == {**response.json["error"], "type": "not_found",
                                          "code": "payment_link_not_found"}


def test_merchant_link_id_does_not_open_the_buyer_view(client, store):
    link = factories.make_payment_link(store)
    assert client.get(f"/v1/public/payment-links/{link.public_id}").status_code == 404


def test_legacy_twelve_character_token_resolves_to_the_current_id(client, store):
    link = factories.make_payment_link(store)
    with db.connection_context():
        PaymentLink.update(legacy_plpub_id="plpub_0a1b2c3d4e5f").where(PaymentLink.id == link.id).execute()
    view = client.get("/v1/public/payment-links/plpub_0a1b2c3d4e5f")
    assert view.status_code == 200 and view.json["public_id"] == link.plpub_id
    response = checkout(client, "plpub_0a1b2c3d4e5f")
    assert response.status_code == 201
    assert [invoice.public_id for invoice in invoices_of(link)] == [response.json["invoice_id"]]


@pytest.mark.parametrize("status", ["inactive", "completed"])
def test_buyer_view_of_a_closed_link_is_still_200(client, store, status):
    link = factories.make_payment_link(store, allow_multiple_payments=False)
    set_status(link, status)
    response = client.get(f"/v1/public/payment-links/{link.plpub_id}")
    assert (response.status_code, response.json["status"]) == (200, status)


def test_checkout_of_fixed_link_creates_a_pending_invoice_with_its_event(client, auth, store):
    link = factories.make_payment_link(store, amount=Decimal("25.00"))
    response = checkout(client, link)
    assert response.status_code == 201, response.json
    assert list(response.json) == ["invoice_id", "checkout_url", "reused"]
    invoice_id = response.json["invoice_id"]
    assert response.json == {"invoice_id": invoice_id, "checkout_url": f"http://tender.test/checkout/{invoice_id}",
                             "reused": False}
    merchant_view = client.get(f"/v1/invoices/{invoice_id}", headers=auth).json
    assert (merchant_view["status"], merchant_view["amount"], merchant_view["currency"]) == ("pending", "25.00", "USD")
    assert merchant_view["payment_link_id"] == link.public_id
    assert merchant_view["checkout_url"] == response.json["checkout_url"]
    with db.connection_context():
        invoice = Invoice.get(Invoice.public_id == invoice_id)
        events = [(e.type, e.payload["data"]["object"]["payment_link_id"]) for e in Event.select().where(
            Event.invoice == invoice.id)]
    assert events == [("invoice.created", link.public_id)]
    assert invoice.store_id == store.id and invoice.output_asset == store.output_asset
    filtered = client.get(f"/v1/invoices?payment_link_id={link.public_id}", headers=auth).json["data"]
    assert [item["id"] for item in filtered] == [invoice_id]


def test_fixed_link_refuses_an_amount(client, store):
    link = factories.make_payment_link(store)
    response = checkout(client, link, {"amount": "25.00"})
    assert response.status_code == 400
    assert (response.json["error"]["code"], response.json["error"]["param"]) == ("validation_error", "amount")
    assert invoices_of(link) == []


@pytest.mark.parametrize("body, status, code", [
    ({}, 400, "validation_error"),
    ({"amount": None}, 400, "validation_error"),
    ({"amount": "4.99"}, 400, "amount_out_of_range"),
    ({"amount": "50.01"}, 400, "amount_out_of_range"),
    ({"amount": 10}, 400, "validation_error"),
    ({"amount": 10.5}, 400, "validation_error"),
    ({"amount": "0"}, 400, "validation_error"),
    ({"amount": "-5"}, 400, "validation_error"),
    ({"amount": "10.001"}, 400, "validation_error"),
    ({"amount": "5.00"}, 201, None),
    ({"amount": "50"}, 201, None),
    ({"amount": "12.34"}, 201, None),
])
def test_customer_defined_amount_is_required_within_bounds(client, store, body, status, code):
    link = factories.make_payment_link(store, amount_mode="customer_defined_amount", amount=None,
                                       min_amount=Decimal("5"), max_amount=Decimal("50"))
    response = checkout(client, link, body)
    assert response.status_code == status, response.json
    if code:
        assert (response.json["error"]["code"], response.json["error"]["param"]) == (code, "amount")
        assert invoices_of(link) == []
    else:
        assert invoices_of(link)[0].amount == Decimal(body["amount"])


def test_out_of_range_error_names_the_bounds(client, store):
    link = factories.make_payment_link(store, amount_mode="customer_defined_amount", amount=None,
                                       min_amount=Decimal("5"))
    error = checkout(client, link, {"amount": "1.00"}).json["error"]
    assert error["details"] == {"min_amount": "5.00", "max_amount": None}
    assert "at least 5.00" in error["message"]
    assert checkout(client, link, {"amount": "999999.00"}).status_code == 201    # no upper bound


@pytest.mark.parametrize("body, param", [
    ({"colour": "red"}, "colour"),
    ({"origin_asset": "usdc.eth"}, "refund_to"),
    ({"refund_to": "0xabc"}, "origin_asset"),
    ({"origin_asset": "", "refund_to": "0xabc"}, "origin_asset"),
    ({"origin_asset": 5, "refund_to": "0xabc"}, "origin_asset"),
    ({"origin_asset": "usdc.eth", "refund_to": "x" * 257}, "refund_to"),
])
def test_checkout_refuses_bad_bodies(client, store, body, param):
    link = factories.make_payment_link(store)
    response = checkout(client, link, body)
    assert response.status_code == 400
    assert (response.json["error"]["code"], response.json["error"]["param"]) == ("validation_error", param)
    assert invoices_of(link) == []


def test_checkout_refuses_non_json(client, store):
    link = factories.make_payment_link(store)
    response = client.post(f"/v1/public/payment-links/{link.plpub_id}/checkout", data=b"[",
                           headers={"Content-Type": "application/json"})
    assert (response.status_code, response.json["error"]["code"]) == (400, "invalid_json")


def test_reusable_link_creates_an_invoice_every_time(client, store):
    link = factories.make_payment_link(store)
    first, second = checkout(client, link), checkout(client, link)
    assert first.json["reused"] is False and second.json["reused"] is False
    assert first.json["invoice_id"] != second.json["invoice_id"]
    assert len(invoices_of(link)) == 2
    pay(first.json["invoice_id"])
    third = checkout(client, link)                    # a paid invoice does not use up a reusable link
    assert third.status_code == 201 and third.json["reused"] is False
    with db.connection_context():
        assert PaymentLink.get_by_id(link.id).status == "active"


def test_single_use_link_reuses_the_open_invoice_then_refuses_once_paid(client, auth, store):
    link = factories.make_payment_link(store, allow_multiple_payments=False)
    first = checkout(client, link)
    second = checkout(client, link)
    assert (first.status_code, second.status_code) == (201, 201)
    assert (first.json["reused"], second.json["reused"]) == (False, True)
    assert second.json["invoice_id"] == first.json["invoice_id"]
    assert second.json["checkout_url"] == first.json["checkout_url"]
    assert len(invoices_of(link)) == 1
    pay(first.json["invoice_id"])
    merchant_view = client.get(f"/v1/payment-links/{link.public_id}", headers=auth).json
    assert merchant_view["status"] == "completed"
    refused = checkout(client, link)
    assert refused.status_code == 403
    assert refused.json["error"]["type"] == "permission_error"
    assert refused.json["error"]["code"] == "payment_link_already_paid"
    assert client.get(f"/v1/public/payment-links/{link.plpub_id}").json["status"] == "completed"
    assert len(invoices_of(link)) == 1


@pytest.mark.parametrize("final", ["cancel", "expire"])
def test_single_use_link_starts_afresh_after_its_invoice_closed_unpaid(client, store, final):
    link = factories.make_payment_link(store, allow_multiple_payments=False)
    first = checkout(client, link).json["invoice_id"]
    with db.connection_context():
        invoice_states.move(Invoice.get(Invoice.public_id == first).id, final, now=utcnow())
    second = checkout(client, link)
    assert second.json["reused"] is False and second.json["invoice_id"] != first


def test_single_use_link_does_not_reuse_an_invoice_past_its_deadline(client, store):
    link = factories.make_payment_link(store, allow_multiple_payments=False)
    first = checkout(client, link).json["invoice_id"]
    with db.connection_context():
        Invoice.update(expires_at=utcnow() - dt.timedelta(seconds=1)).where(Invoice.public_id == first).execute()
    assert checkout(client, link).json["invoice_id"] != first


def test_paying_an_inactive_single_use_links_invoice_completes_it(client, auth, store):
    link = factories.make_payment_link(store, allow_multiple_payments=False)
    invoice_id = checkout(client, link).json["invoice_id"]
    client.post(f"/v1/payment-links/{link.public_id}/deactivate", headers=auth)
    pay(invoice_id)
    assert client.get(f"/v1/payment-links/{link.public_id}", headers=auth).json["status"] == "completed"


def test_inactive_link_refuses_checkout(client, auth, store):
    link = factories.make_payment_link(store)
    client.post(f"/v1/payment-links/{link.public_id}/deactivate", headers=auth)
    response = checkout(client, link)
    assert (response.status_code, response.json["error"]["code"]) == (403, "payment_link_unavailable")
    client.post(f"/v1/payment-links/{link.public_id}/activate", headers=auth)
    assert checkout(client, link).status_code == 201


def test_store_without_payout_wallet_refuses_checkout(client, app):
    with db.connection_context():
        store = stores.create_store(name="No wallet yet", now=utcnow())
    link = factories.make_payment_link(store)
    response = checkout(client, link)
    assert (response.status_code, response.json["error"]["code"]) == (403, "payment_link_unavailable")
    assert invoices_of(link) == []


def test_invoice_expiry_uses_the_configured_ttl(client, store, settings):
    link = factories.make_payment_link(store)
    invoice_id = checkout(client, link).json["invoice_id"]
    with db.connection_context():
        invoice = Invoice.get(Invoice.public_id == invoice_id)
    assert invoice.expires_at - invoice.created_at == dt.timedelta(seconds=settings.invoice_ttl_seconds)
