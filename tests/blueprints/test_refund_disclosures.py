"""What the refund and buyer pages must not give away (docs/security.md#money-going-out-merchant-refunds):
a provider's internals in a 503, a cacheable funding QR, a buyer's whole refund address."""
import logging

from providers.base import ProviderUnavailable
from tests.blueprints.assertions import assert_error
from tests.blueprints.test_refunds import create, paid  # noqa: F401  (the fixture)

PROVIDER_TEXT = "HTTPSConnectionPool(host='10.9.8.7', port=8443): Max retries exceeded (ConnectionRefusedError)"


def _provider_down(monkeypatch):
    def down(*args, **kwargs):
        raise ProviderUnavailable(PROVIDER_TEXT)
    monkeypatch.setattr("providers.sandbox.SandboxProvider.deposit_status", down)


def test_a_refund_cancel_the_provider_cannot_answer_is_a_generic_503_and_a_log_line(client, auth, paid, monkeypatch,
                                                                                     caplog):
    refund = create(client, auth, paid["id"]).json
    _provider_down(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="tender.provider"):
        response = client.post(f"/v1/refunds/{refund['id']}/cancel", headers=auth)
    assert_error(response, 503, "provider_unavailable")
    assert response.headers["Retry-After"]
    text = response.get_data(as_text=True)
    assert not any(leak in text for leak in ("10.9.8.7", "8443", "ConnectionRefused", "HTTPSConnectionPool")), text
    assert PROVIDER_TEXT in caplog.text and refund["id"] in caplog.text        # the operator still learns it


def test_an_invoice_cancel_the_provider_cannot_answer_tells_no_internals_either(client, auth, monkeypatch):
    invoice = client.post("/v1/invoices", json={"amount": "5.00"}, headers=auth).json
    client.post(f"/v1/public/invoices/{invoice['id']}/quote",
                json={"origin_asset": "usdc.eth", "refund_to": "0x" + "b" * 40, "dry": False})
    _provider_down(monkeypatch)
    response = client.post(f"/v1/invoices/{invoice['id']}/cancel", headers=auth)
    assert_error(response, 503, "provider_unavailable")
    assert "10.9.8.7" not in response.get_data(as_text=True)


def test_the_funding_qr_is_not_cached(client, auth, paid):
    refund = create(client, auth, paid["id"]).json
    qr = client.get(f"/fund/{refund['id']}/qr.svg")
    assert qr.status_code == 200 and qr.headers["Cache-Control"] == "no-store"


def _short(address):
    return address[:6] + "…" + address[-4:]


def test_the_buyer_view_shows_a_shortened_refund_address_to_whoever_holds_the_invoice_id(client, auth):
    """A stranger who started a single-use link's checkout keeps the invoice id: the real payer's
    address must not be readable whole from it, yet the payer recognises their own."""
    invoice = client.post("/v1/invoices", json={"amount": "5.00"}, headers=auth).json
    payer = "0x" + "7c" * 20
    committed = client.post(f"/v1/public/invoices/{invoice['id']}/quote",
                            json={"origin_asset": "usdc.eth", "refund_to": payer, "dry": False})
    assert committed.status_code == 200, committed.json
    view = client.get(f"/v1/public/invoices/{invoice['id']}")
    page = client.get(f"/checkout/{invoice['id']}").get_data(as_text=True)
    for text in (view.get_data(as_text=True), committed.get_data(as_text=True), page):
        assert payer not in text
    assert view.json["refund_to"] == committed.json["invoice"]["refund_to"] == _short(payer) and _short(payer) in page


def test_the_buyer_view_sums_refunds_per_asset_and_address(client, auth, paid):
    """Two merchant refunds in two assets: each asset's own sum and address, never one sum under
    the first one's label."""
    from tests.payflow import poll_until_quiet

    elsewhere = "7" * 44
    refunds = [create(client, auth, paid["id"]).json, create(client, auth, paid["id"], asset="sol",
                                                            refund_to=elsewhere).json]
    for refund in refunds:
        assert client.post(f"/v1/test_helpers/refunds/{refund['id']}/fund", json={}, headers=auth).status_code == 202
    poll_until_quiet("refunds")
    delivered = {r["asset"]: client.get(f"/v1/refunds/{r['id']}", headers=auth).json for r in refunds}
    assert all(r["status"] == "succeeded" for r in delivered.values())
    view = client.get(f"/v1/public/invoices/{paid['id']}").json
    assert sorted((sent["asset"], sent["amount"], sent["address"]) for sent in view["refunds"]) == sorted(
        (asset, r["amount_out"], _short(r["refund_to"])) for asset, r in delivered.items())
    assert view["refund"] == view["refunds"][0]
    page = client.get(f"/checkout/{paid['id']}").get_data(as_text=True)
    assert all(f"{r['amount_out']} {asset} to {_short(r['refund_to'])}" in page for asset, r in delivered.items())
