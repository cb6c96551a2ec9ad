"""The hosted pages' server side (blueprints/pages.py) and the sandbox's buyer "Simulate payment"
route; the browser flows are tests/browser/."""
import dataclasses
import re

import pytest

from tests import factories
from tests.payflow import reload, run_pipeline

EVM_ADDRESS = "0x" + "3f" * 20


def _commit(client, invoice):
    response = client.post(f"/v1/public/invoices/{invoice.public_id}/quote",
                           json={"origin_asset": "usdc.eth", "refund_to": EVM_ADDRESS, "dry": False})
    assert response.status_code == 200, response.json


def test_simulate_payment_needs_no_key_and_moves_the_invoice_through_the_jobs(client, store):
    invoice = factories.make_invoice(store)
    _commit(client, invoice)
    response = client.post(f"/v1/public/invoices/{invoice.public_id}/simulate-payment", json={})
    assert response.status_code == 202
    assert response.json["status"] == "awaiting_payment" and "metadata" not in response.json
    run_pipeline()
    assert reload(invoice).status == "paid"


def test_simulate_payment_with_an_outcome(client, store):
    invoice = factories.make_invoice(store)
    _commit(client, invoice)
    client.post(f"/v1/public/invoices/{invoice.public_id}/simulate-payment", json={"outcome": "failed"})
    run_pipeline()
    assert reload(invoice).status == "failed"


@pytest.mark.parametrize("body, code", [
    ({"outcome": "lost"}, "validation_error"),
    ({"amount": "1"}, "validation_error"),          # a buyer cannot choose what was "paid"
    ({"refund_to": EVM_ADDRESS}, "validation_error"),
])
def test_simulate_payment_refuses_other_fields(client, store, body, code):
    invoice = factories.make_invoice(store)
    _commit(client, invoice)
    response = client.post(f"/v1/public/invoices/{invoice.public_id}/simulate-payment", json=body)
    assert (response.status_code, response.json["error"]["code"]) == (400, code)


def test_simulate_payment_needs_a_deposit_address_first(client, store):
    invoice = factories.make_invoice(store)
    response = client.post(f"/v1/public/invoices/{invoice.public_id}/simulate-payment", json={})
    assert (response.status_code, response.json["error"]["code"]) == (400, "invoice_not_payable")
    assert reload(invoice).status == "pending" and reload(invoice).deposit_address is None
    missing = client.post(f"/v1/public/invoices/inv_{'0' * 32}/simulate-payment", json={})
    assert (missing.status_code, missing.json["error"]["code"]) == (404, "invoice_not_found")


def test_simulate_payment_is_absent_unless_sandbox(app, client, store):
    invoice = factories.make_invoice(store)
    sandbox = app.extensions["tender.settings"]
    app.extensions["tender.settings"] = dataclasses.replace(sandbox, swap_provider="oneclick")
    try:
        response = client.post(f"/v1/public/invoices/{invoice.public_id}/simulate-payment", json={})
    finally:
        app.extensions["tender.settings"] = sandbox
    assert (response.status_code, response.json["error"]["code"]) == (404, "route_not_found")


def test_checkout_page_shows_the_buyer_view_only(client, store):
    invoice = factories.make_invoice(store, metadata={"note": "internal-7731"}, external_order_id="order-5521")
    response = client.get(f"/checkout/{invoice.public_id}")
    assert response.status_code == 200 and response.mimetype == "text/html"
    html = response.get_data(as_text=True)
    assert "Test shop" in html and invoice.public_id in html
    for private in (str(store.id), store.payout_wallet, "internal-7731", "order-5521"):
        assert private not in html
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
    assert response.headers["X-Frame-Options"] == "DENY" and response.headers["Cache-Control"] == "no-store"
    assert "<script>" not in html and " style=" not in html              # no inline script or style
    assert all(url.startswith("/") for url in re.findall(r'(?:src|href)="([^"]*)"', html))   # all from this app


def test_qr_code_is_svg_of_the_deposit_address_once_there_is_one(client, store):
    invoice = factories.make_invoice(store)
    before = client.get(f"/checkout/{invoice.public_id}/qr.svg")
    assert before.status_code == 404 and "There is no such deposit address." in before.get_data(as_text=True)
    _commit(client, invoice)
    response = client.get(f"/checkout/{invoice.public_id}/qr.svg")
    assert response.status_code == 200 and response.mimetype == "image/svg+xml"
    assert response.get_data(as_text=True).startswith("<svg") and "<path" in response.get_data(as_text=True)
    assert response.headers["Cache-Control"] == "no-store"        # as the page and docs/security.md say


def test_unknown_ids_are_html_404_pages_while_v1_stays_json(client):
    for path, what in ((f"/checkout/inv_{'0' * 32}", "invoice"), ("/checkout/nonsense", "invoice"),
                       (f"/checkout/inv_{'0' * 32}/qr.svg", "invoice"),
                       (f"/pay/plpub_{'0' * 32}", "payment link"), ("/pay/x", "payment link")):
        response = client.get(path)
        assert response.status_code == 404 and response.mimetype == "text/html", path
        assert f"There is no such {what}." in response.get_data(as_text=True), path
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    assert client.get(f"/v1/public/invoices/inv_{'0' * 32}").mimetype == "application/json"


def test_payment_link_page_explains_an_inactive_link(client, store, auth):
    link = client.post("/v1/payment-links", headers=auth,
                       json={"title": "Mug", "amount_mode": "fixed_amount", "amount": "9.00"}).json
    html = client.get(f"/pay/{link['public_id']}").get_data(as_text=True)
    assert "Mug" in html and "9.00" in html and 'id="pay-form"' in html
    client.post(f"/v1/payment-links/{link['id']}/deactivate", headers=auth)
    html = client.get(f"/pay/{link['public_id']}").get_data(as_text=True)
    assert "Not accepting payments" in html and 'id="pay-form"' not in html


def test_static_assets_are_served_by_the_app(client):
    for name, kind in (("tender.css", "text/css"), ("checkout.js", "text/javascript"), ("pay.js", "text/javascript"),
                       ("common.js", "text/javascript")):
        response = client.get(f"/assets/{name}")
        assert response.status_code == 200 and response.mimetype == kind, name
    css = client.get("/assets/tender.css").get_data(as_text=True)
    assert "@import" not in css and "url(" not in css                  # system fonts, no images from elsewhere


def test_network_patterns_accept_sandbox_addresses_and_refuse_typos():
    from providers.sandbox import ASSETS, sandbox_refund_address
    from core.networks import address_looks_valid

    for asset in ASSETS:
        assert address_looks_valid(asset.network, sandbox_refund_address(asset.code)), asset.code
    assert not address_looks_valid("eth", "0x123")
    assert not address_looks_valid("btc", "0x" + "ab" * 20)
    assert address_looks_valid("near", "alice.near") and not address_looks_valid("near", "Alice!")
