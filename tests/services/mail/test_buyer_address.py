"""Where a buyer's mail may go: only an address given for that invoice, by the merchant
(`customer_email` on create) or by the buyer on the checkout or payment-link page; the merchant's
wins; a bad address is a 400 naming the field."""
import pytest

from models.base import db
from models.invoices import Invoice
from tests import factories

REFUND_TO = "0x1111111111111111111111111111111111111111"


def _email_of(public_id):
    with db.connection_context():
        return Invoice.get(Invoice.public_id == public_id).customer_email


def _create(client, auth, **body):
    return client.post("/v1/invoices", json={"amount": "25.00", **body}, headers=auth)


def test_the_merchant_gives_it_on_create(client, auth):
    invoice = _create(client, auth, customer_email="Buyer@Example.COM").json
    assert _email_of(invoice["id"]) == "Buyer@example.com"
    assert "customer_email" not in invoice                    # kept for the receipt, not echoed


def test_the_buyer_gives_it_at_checkout_unless_the_merchant_did(client, auth):
    mine = _create(client, auth).json
    quote = {"origin_asset": "usdc.eth", "refund_to": REFUND_TO, "dry": False, "customer_email": "me@example.com"}
    assert client.post(f"/v1/public/invoices/{mine['id']}/quote", json=quote).status_code == 200
    assert _email_of(mine["id"]) == "me@example.com"
    theirs = _create(client, auth, customer_email="merchant-knows@example.com").json
    client.post(f"/v1/public/invoices/{theirs['id']}/quote", json={**quote, "dry": True})
    assert _email_of(theirs["id"]) == "merchant-knows@example.com"


def test_the_buyer_gives_it_on_a_payment_link(client, store):
    link = factories.make_payment_link(store)
    body = {"origin_asset": "usdc.eth", "refund_to": REFUND_TO, "customer_email": "linked@example.com"}
    result = client.post(f"/v1/public/payment-links/{link.plpub_id}/checkout", json=body)
    assert result.status_code in (200, 201), result.json
    assert _email_of(result.json["invoice_id"]) == "linked@example.com"


@pytest.mark.parametrize("address", ["nope", "a@b", "x@example.com\r\nBcc: all@example.com", "Me <me@example.com>",
                                     "a" * 250 + "@example.com", 7])
def test_a_bad_address_is_a_400_naming_the_field(client, auth, store, address):
    created = _create(client, auth, customer_email=address)
    assert created.status_code == 400 and "customer_email" in created.get_data(as_text=True)
    invoice = _create(client, auth).json
    quoted = client.post(f"/v1/public/invoices/{invoice['id']}/quote",
                         json={"origin_asset": "usdc.eth", "customer_email": address})
    assert quoted.status_code == 400 and quoted.json["error"]["param"] == "customer_email"
    link = factories.make_payment_link(store)
    checkout = client.post(f"/v1/public/payment-links/{link.plpub_id}/checkout", json={"customer_email": address})
    assert checkout.status_code == 400 and checkout.json["error"]["param"] == "customer_email"


def test_both_pages_offer_the_optional_field(client, auth, store):
    invoice = _create(client, auth).json
    link = factories.make_payment_link(store)
    for page in (f"/checkout/{invoice['id']}", f"/pay/{link.plpub_id}"):
        html = client.get(page).get_data(as_text=True)
        assert 'id="customer-email"' in html and 'type="email"' in html and "(optional)" in html
