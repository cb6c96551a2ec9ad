"""Buyer routes (docs/checkout.md): no auth, buyer-safe fields, the quote flow and its errors."""
import datetime as dt

import pytest

from tests import factories


@pytest.fixture
def invoice(store):
    return factories.make_invoice(store, metadata={"order": "A-1"}, external_order_id="A-1")


def test_assets_list_the_accepted_origin_assets(client):
    response = client.get("/v1/public/assets")
    assert response.status_code == 200
    codes = {asset["code"] for asset in response.json["data"]}
    assert {"btc", "eth", "sol", "near", "usdc.eth", "usdc.base", "usdt.tron", "usdc.near"} <= codes
    xlm = next(asset for asset in response.json["data"] if asset["code"] == "xlm")
    assert xlm == {"code": "xlm", "symbol": "XLM", "network": "stellar", "decimals": 7, "needs_memo": True}


def test_public_invoice_hides_merchant_fields(client, invoice):
    body = client.get(f"/v1/public/invoices/{invoice.public_id}").json
    assert body["id"] == invoice.public_id and body["store_name"] == "Test shop" and body["sandbox"] is True
    for private in ("metadata", "external_order_id", "customer_id", "store_id", "callback_url", "payment_link_id"):
        assert private not in body
    assert client.get("/v1/public/invoices/inv_" + "0" * 32).status_code == 404
    assert client.get("/v1/public/invoices/not-an-id").json["error"]["code"] == "invoice_not_found"


def test_dry_quote_prices_and_moves_to_quoted(client, invoice):
    response = client.post(f"/v1/public/invoices/{invoice.public_id}/quote", json={"origin_asset": "eth"})
    assert response.status_code == 200, response.json
    assert response.json["quote"]["amount_in"] == "0.00314063"     # 10.05 USD at 3,200, 8 places, up
    assert response.json["quote"]["deposit_address"] is None
    assert response.json["invoice"]["status"] == "quoted"


def test_committed_quote_issues_a_deposit_address_once(client, invoice, auth):
    body = {"origin_asset": "xlm", "refund_to": "GBUYER", "dry": False}
    first = client.post(f"/v1/public/invoices/{invoice.public_id}/quote", json=body)
    assert first.status_code == 200, first.json
    view = first.json["invoice"]
    assert view["status"] == "awaiting_payment" and view["deposit_address"].startswith("G")
    assert view["deposit_memo"] and view["amount_due"] == "100.50"
    again = client.post(f"/v1/public/invoices/{invoice.public_id}/quote", json=body)
    assert again.json["invoice"]["deposit_address"] == view["deposit_address"] and again.json["quote"] is None
    status = client.get(f"/v1/invoices/{invoice.public_id}/status", headers=auth).json
    assert (status["deposit_address"], status["deposit_memo"]) == (view["deposit_address"], view["deposit_memo"])


@pytest.mark.parametrize("body, code, param", [
    ({"origin_asset": "doge"}, "unsupported_asset", "origin_asset"),
    ({"origin_asset": "eth", "dry": False}, "validation_error", "refund_to"),
    ({"origin_asset": "eth", "dry": "false"}, "validation_error", "dry"),
    ({"origin_asset": "eth", "extra": 1}, "validation_error", "extra"),
    ({}, "validation_error", "origin_asset"),
])
def test_bad_quote_input_gets_the_documented_error(client, invoice, body, code, param):
    response = client.post(f"/v1/public/invoices/{invoice.public_id}/quote", json=body)
    assert response.status_code == 400
    assert (response.json["error"]["code"], response.json["error"].get("param")) == (code, param)


def test_no_quote_for_an_invoice_past_its_expiry(client, store):
    late = factories.make_invoice(store, expires_at=dt.datetime(2020, 1, 1))
    response = client.post(f"/v1/public/invoices/{late.public_id}/quote", json={"origin_asset": "eth"})
    assert response.status_code == 400 and response.json["error"]["code"] == "invoice_not_payable"
    assert client.post(f"/v1/public/invoices/{late.public_id}/quote", data="{oops",
                       content_type="application/json").json["error"]["code"] == "invalid_json"


def test_buyer_view_tells_what_arrived_what_is_missing_and_where_a_refund_went(client, auth, invoice):
    from tests.payflow import poll_until_quiet

    url = f"/v1/public/invoices/{invoice.public_id}"
    client.post(f"{url}/quote", json={"origin_asset": "usdc.eth", "refund_to": "0x" + "ab" * 20, "dry": False})
    before = client.get(url).json
    assert (before["amount_received"], before["amount_remaining"], before["refund"]) == (None, None, None)
    assert before["refund_to"] == "0xabab…abab"                   # the buyer's own address, shown back shortened

    client.post(f"/v1/test_helpers/invoices/{invoice.public_id}/pay", json={"outcome": "underpaid"}, headers=auth)
    poll_until_quiet("chain")
    underpaid = client.get(url).json
    assert underpaid["status"] == "underpaid" and underpaid["amount_due"] == "10.05"
    assert (underpaid["amount_received"], underpaid["amount_remaining"]) == ("5.025", "5.025")
    assert underpaid["refund"] is None


def test_buyer_view_of_a_refund(client, auth, invoice):
    from tests.payflow import poll_until_quiet

    url = f"/v1/public/invoices/{invoice.public_id}"
    client.post(f"{url}/quote", json={"origin_asset": "usdc.eth", "refund_to": "0x" + "cd" * 20, "dry": False})
    client.post(f"/v1/test_helpers/invoices/{invoice.public_id}/pay", json={"outcome": "refunded"}, headers=auth)
    poll_until_quiet("chain")
    poll_until_quiet("settlement")
    view = client.get(url).json
    refund_hash = next(t["transaction_hash"] for t in client.get(
        f"/v1/invoices/{invoice.public_id}/transactions", headers=auth).json["data"] if t["type"] == "refund")
    assert view["status"] == "refunded" and view["amount_remaining"] is None
    assert view["refund"] == {"amount": "10.05", "asset": "usdc.eth", "address": "0xcdcd…cdcd",
                              "transaction_hash": refund_hash}
    assert view["refunds"] == [view["refund"]]
