"""Checkout with origin_asset + refund_to: quoted at once through the swap provider.

The provider is a stand-in object handed to the app (or to the service) explicitly: it is the
external 1Click service we stand in for, not our own database, queue or HTTP layer.
"""
import datetime as dt
from decimal import Decimal

import pytest

from core.clock import utcnow
from core.errors import Unavailable
from models.base import db
from models.events import Event
from models.invoices import Invoice
from providers.base import Asset, ProviderRejected, ProviderUnavailable, Quote
from services.engine import checkout
from tests import factories

BUYER = {"origin_asset": "usdc.eth", "refund_to": "0xbuyer"}


class StandInProvider:
    name = "stand-in"

    def __init__(self, *, down=False, reject=False):
        self.down, self.reject, self.requests, self.issued = down, reject, [], 0

    def supported_assets(self):
        if self.down:
            raise ProviderUnavailable("connection refused")
        return [Asset(code="usdc.eth", symbol="USDC", network="eth", decimals=6, provider_asset_id="nep141:usdc")]

    def quote(self, request):
        self.requests.append(request)
        if self.reject:
            raise ProviderRejected("refundTo is not a valid address")
        self.issued += 1
        return Quote(origin_asset=request.origin_asset, destination_asset=request.destination_asset,
                     amount_in=request.amount_out + Decimal("0.05"), amount_out=request.amount_out,
                     amount_in_usd=None, deadline=request.deadline, deposit_address=f"0xdeposit{self.issued}",
                     deposit_memo="memo-7")


@pytest.fixture
def provider(app, monkeypatch):
    """The swap provider stands in for 1Click: this process's one provider is the stand-in."""
    import providers

    stand_in = StandInProvider()
    monkeypatch.setattr(providers, "shared", lambda settings: stand_in)
    return stand_in


def post_checkout(client, link, body):
    return client.post(f"/v1/public/payment-links/{link.plpub_id}/checkout", json=body)


def test_checkout_with_asset_comes_back_awaiting_payment(client, auth, store, provider):
    link = factories.make_payment_link(store, amount=Decimal("25.00"))
    response = post_checkout(client, link, BUYER)
    assert response.status_code == 201 and response.json["reused"] is False
    invoice_id = response.json["invoice_id"]
    status = client.get(f"/v1/invoices/{invoice_id}/status", headers=auth).json
    assert (status["status"], status["deposit_address"], status["deposit_memo"]) == (
        "awaiting_payment", "0xdeposit1", "memo-7")
    [request] = provider.requests
    assert (request.origin_asset, request.destination_asset, request.amount_out) == (
        "usdc.eth", store.output_asset, Decimal("25.00"))
    assert (request.recipient, request.refund_to, request.dry, request.reference) == (
        store.payout_wallet, "0xbuyer", False, invoice_id)
    with db.connection_context():
        invoice = Invoice.get(Invoice.public_id == invoice_id)
        kinds = [e.type for e in Event.select().where(Event.invoice == invoice.id).order_by(Event.created_at)]
    assert request.deadline == invoice.expires_at
    assert sorted(kinds) == ["invoice.awaiting_payment", "invoice.created"]


def test_single_use_reuse_quotes_a_pending_invoice_once(client, store, provider):
    link = factories.make_payment_link(store, allow_multiple_payments=False)
    first = post_checkout(client, link, {})                  # buyer opened the page, picked nothing yet
    second = post_checkout(client, link, BUYER)              # now picks an asset
    third = post_checkout(client, link, BUYER)               # double click
    assert second.json == {**first.json, "reused": True} and third.json["invoice_id"] == first.json["invoice_id"]
    assert len(provider.requests) == 1                       # the address issued once is kept
    with db.connection_context():
        assert Invoice.get(Invoice.public_id == first.json["invoice_id"]).deposit_address == "0xdeposit1"


def test_provider_unreachable_is_503_with_retry_after_and_writes_nothing(client, store, provider):
    provider.down = True
    link = factories.make_payment_link(store)
    response = post_checkout(client, link, BUYER)
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "5"
    assert response.json["error"]["type"] == "service_unavailable"
    assert response.json["error"]["code"] == "checkout_unavailable"
    with db.connection_context():
        assert Invoice.select().count() == 0


def test_unknown_asset_is_refused_before_anything_is_written(client, store, provider):
    link = factories.make_payment_link(store)
    response = post_checkout(client, link, {"origin_asset": "doge", "refund_to": "D8x"})
    assert response.status_code == 400
    assert (response.json["error"]["code"], response.json["error"]["param"]) == ("unsupported_asset", "origin_asset")
    with db.connection_context():
        assert Invoice.select().count() == 0


def test_link_rules_come_before_the_provider(client, auth, store, provider):
    provider.down = True
    link = factories.make_payment_link(store)
    client.post(f"/v1/payment-links/{link.public_id}/deactivate", headers=auth)
    assert post_checkout(client, link, BUYER).json["error"]["code"] == "payment_link_unavailable"
    assert client.post("/v1/public/payment-links/plpub_" + "0" * 32 + "/checkout", json=BUYER).status_code == 404


def test_provider_rejection_is_a_400_and_the_invoice_stays_pending(client, store, provider):
    provider.reject = True
    link = factories.make_payment_link(store, allow_multiple_payments=False)
    response = post_checkout(client, link, BUYER)
    assert (response.status_code, response.json["error"]["param"]) == (400, "refund_to")
    provider.reject = False
    retried = post_checkout(client, link, BUYER)              # the buyer fixes the address and retries
    assert retried.status_code == 201 and retried.json["reused"] is True


def test_quote_failing_at_quote_time_is_503(app, store):
    """Provider up for the asset list, down for the quote: the service still answers 503."""
    class FlakyProvider(StandInProvider):
        def quote(self, request):
            raise ProviderUnavailable("timeout")

    link = factories.make_payment_link(store)
    with db.connection_context():
        with pytest.raises(Unavailable) as error:
            checkout.start_checkout(link.plpub_id, dict(BUYER), now=utcnow(), ttl_seconds=600,
                                    get_provider=FlakyProvider)
    assert (error.value.code, error.value.retry_after) == ("checkout_unavailable", 5)


def test_service_accepts_the_provider_explicitly(app, store):
    stand_in = StandInProvider()
    link = factories.make_payment_link(store, amount=Decimal("9.99"))
    now = utcnow()
    with db.connection_context():
        result = checkout.start_checkout(link.plpub_id, dict(BUYER, amount=None), now=now, ttl_seconds=600,
                                         get_provider=lambda: stand_in)
    assert (result.reused, result.invoice.status, result.invoice.deposit_address) == (
        False, "awaiting_payment", "0xdeposit1")
    assert result.invoice.expires_at == now + dt.timedelta(seconds=600)


def test_provider_is_not_asked_without_an_asset(app, store):
    def no_provider():
        raise AssertionError("the provider must not be needed")

    link = factories.make_payment_link(store)
    with db.connection_context():
        result = checkout.start_checkout(link.plpub_id, {}, now=utcnow(), ttl_seconds=600, get_provider=no_provider)
    assert result.invoice.status == "pending"

