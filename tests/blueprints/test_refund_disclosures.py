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
