"""The oneclick adapter's reverse quote (a merchant refund, docs/refunds.md) against the local
1Click-speaking server: EXACT_INPUT from the store's payout asset, the buyer as recipient, the
merchant's payout wallet as `refundTo`; and a refund's deposit followed with the same status read."""
from decimal import Decimal

import pytest

from providers import base
from providers.base import ProviderRejected, ProviderUnavailable, ReverseQuoteRequest
from tests.providers.test_oneclick import BUYER_REFUND, DEADLINE, USDC_ETH_ID, USDC_NEAR_ID, make_provider
from tests.support.oneclick_server import OneClickServer, rejected, server_error

SOL_ID = "nep141:sol.omft.near"


@pytest.fixture
def server():
    with OneClickServer() as running:
        yield running


def reverse_request(**over) -> ReverseQuoteRequest:
    fields = dict(origin_asset="usdc.near", destination_asset="usdc.eth", amount_in=Decimal("15"),
                  recipient=BUYER_REFUND, refund_to="merchant.near", deadline=DEADLINE, reference="inv_x")
    return ReverseQuoteRequest(**{**fields, **over})


def test_the_reverse_quote_is_exact_input_to_the_buyer_with_the_merchant_as_refund_to(server):
    quote = make_provider(server).reverse_quote(reverse_request())

    sent = server.requests_to("/v0/quote")[0].json
    assert (sent["swapType"], sent["dry"], sent["amount"]) == ("EXACT_INPUT", False, "15000000")
    assert (sent["originAsset"], sent["destinationAsset"]) == (USDC_NEAR_ID, USDC_ETH_ID)
    assert (sent["recipient"], sent["recipientType"]) == (BUYER_REFUND, "DESTINATION_CHAIN")
    assert (sent["refundTo"], sent["refundType"]) == ("merchant.near", "ORIGIN_CHAIN")
    assert (sent["depositType"], sent["depositMode"]) == ("ORIGIN_CHAIN", "SIMPLE")
    assert quote.deposit_address.startswith("near-deposit-")
    assert quote.amount_in == Decimal("15") and quote.amount_out == Decimal("15")     # both USDC at 0.9999
    assert (quote.origin_decimals, quote.destination_decimals) == (6, 6)


def test_into_a_native_coin_the_buyer_receives_its_price_worth(server):
    quote = make_provider(server).reverse_quote(reverse_request(destination_asset="sol", recipient="7" * 44))
    assert server.requests_to("/v0/quote")[0].json["destinationAsset"] == SOL_ID
    assert quote.amount_out == Decimal("0.09999")          # 15 x 0.9999 / 150


def test_a_wet_reverse_quote_is_never_retried(server):
    server.inject("/v0/quote", server_error(503), times=1)
    with pytest.raises(ProviderUnavailable):
        make_provider(server).reverse_quote(reverse_request())
    assert len(server.requests_to("/v0/quote")) == 1       # each wet quote derives a fresh address


def test_a_refused_address_is_rejected(server):
    with pytest.raises(ProviderRejected, match="recipient"):
        make_provider(server).reverse_quote(reverse_request(recipient="not-an-eth-address"))
    server.inject("/v0/quote", rejected(400, "amount is too low"))
    with pytest.raises(ProviderRejected, match="too low"):
        make_provider(server).reverse_quote(reverse_request())


def test_the_refund_swap_is_followed_with_the_same_status_read(server):
    provider = make_provider(server)
    quote = provider.reverse_quote(reverse_request())
    server.script_status(quote.deposit_address, {
        "status": "REFUNDED",
        "swapDetails": {"amountIn": "15000000", "refundedAmount": "15000000",
                        "originChainTxHashes": [{"hash": "funding-tx"}, {"hash": "return-tx"}],
                        "destinationChainTxHashes": []}})
    status = provider.deposit_status(quote.deposit_address, decimals=(quote.origin_decimals,
                                                                       quote.destination_decimals))
    assert status.status == base.REFUNDED and status.refunded_amount == Decimal("15")
    assert status.origin_tx_hashes == ("funding-tx", "return-tx")
