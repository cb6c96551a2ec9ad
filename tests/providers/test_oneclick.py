"""The oneclick adapter against a local 1Click-speaking server (tests/support/oneclick_server.py)."""
import datetime as dt
from decimal import Decimal

import pytest
import requests

from providers import base
from providers.base import ProviderRejected, ProviderUnavailable, QuoteRequest
from providers.oneclick import (
    OneClickProvider, RateLimited, UnsupportedAsset, from_smallest_units, to_smallest_units,
)
from tests.support.oneclick_server import (
    Fault, OneClickServer, malformed_json, rejected, server_error, slow,
)

DEADLINE = dt.datetime(2030, 1, 1, 12, 30)
USDC_NEAR_ID = "nep141:17208628f84f5d6ad33f0da3bbbeb27ffcb398eac501a31bd6ad2011e36133a1"
USDC_ETH_ID = "nep141:eth-0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48.omft.near"
BUYER_REFUND = "0x52908400098527886E0F7030069857D2E4169EE7"
STELLAR_BUYER = "GBUYER" + "A" * 50


@pytest.fixture
def server():
    with OneClickServer() as running:
        yield running


def make_provider(server, jwt="test-jwt", **over) -> OneClickProvider:
    session = requests.Session()
    session.trust_env = False  # no proxy settings: traffic stays on 127.0.0.1
    options = dict(timeout=2.0, retries=2, backoff=0, session=session)
    return OneClickProvider(server.url, jwt, **{**options, **over})


@pytest.fixture
def provider(server):
    return make_provider(server)


def quote_request(**over) -> QuoteRequest:
    fields = dict(origin_asset="usdc.eth", destination_asset="usdc.near", amount_out=Decimal("25"),
                  recipient="merchant.near", refund_to=BUYER_REFUND, deadline=DEADLINE, dry=False)
    return QuoteRequest(**{**fields, **over})


# --- tokens ----------------------------------------------------------------------------

def test_asset_codes_follow_our_naming(provider):
    assets = {asset.code: asset for asset in provider.supported_assets()}

    assert set(assets) == {"btc", "eth", "sol", "xlm", "eth.base",
                           "usdc.eth", "usdc.base", "usdc.near", "usdt.tron"}   # no NEAR: see AMBIGUOUS_DEPOSITS
    assert assets["usdc.near"].provider_asset_id == USDC_NEAR_ID
    assert (assets["usdc.eth"].symbol, assets["usdc.eth"].network, assets["usdc.eth"].decimals) == ("USDC", "eth", 6)
    assert assets["xlm"].needs_memo and not assets["btc"].needs_memo
    assert assets["eth"].price_usd == Decimal("2000") and type(assets["eth"].price_usd) is Decimal


def test_token_list_is_cached_until_it_goes_stale(server):
    clock = {"now": 1000.0}
    provider = make_provider(server, None, token_ttl=300, clock=lambda: clock["now"])

    provider.supported_assets()
    provider.quote(quote_request(dry=True))
    assert len(server.requests_to("/v0/tokens")) == 1

    clock["now"] += 301
    provider.supported_assets()
    assert len(server.requests_to("/v0/tokens")) == 2


def test_unknown_asset_is_rejected_without_a_quote_request(provider, server):
    provider.supported_assets()
    seen = len(server.requests)

    with pytest.raises(UnsupportedAsset, match="doge.bsc"):
        provider.quote(quote_request(origin_asset="doge.bsc"))

    assert isinstance(UnsupportedAsset("x"), ProviderRejected)
    assert len(server.requests) == seen


# --- quotes ----------------------------------------------------------------------------

def test_wet_quote_sends_exact_output_in_smallest_units_with_auth(provider, server):
    quote = provider.quote(quote_request())

    sent = server.requests_to("/v0/quote")[0]
    assert sent.headers["authorization"] == "Bearer test-jwt"
    assert sent.json["dry"] is False
    assert sent.json["swapType"] == "EXACT_OUTPUT"
    assert sent.json["amount"] == "25000000"
    assert (sent.json["originAsset"], sent.json["destinationAsset"]) == (USDC_ETH_ID, USDC_NEAR_ID)
    assert (sent.json["recipient"], sent.json["recipientType"]) == ("merchant.near", "DESTINATION_CHAIN")
    assert (sent.json["refundTo"], sent.json["refundType"]) == (BUYER_REFUND, "ORIGIN_CHAIN")
    assert (sent.json["depositType"], sent.json["depositMode"]) == ("ORIGIN_CHAIN", "SIMPLE")
    assert sent.json["deadline"] == "2030-01-01T12:30:00.000Z"
    assert sent.json["slippageTolerance"] == 100
    assert quote.deposit_address.startswith("eth-deposit-")
    assert quote.amount_in == Decimal("25.25")  # 1% slippage buffer, 1:1 price
    assert quote.amount_out == Decimal("25")
    assert quote.deadline != DEADLINE and quote.deadline.tzinfo is None  # the provider's own, not ours echoed
    assert quote.correlation_id and quote.time_estimate_seconds == 20


@pytest.mark.parametrize("dry", [False, True])
def test_the_operators_fee_is_sent_as_app_fees_and_priced_in(provider, server, dry):
    quote = provider.quote(quote_request(dry=dry, amount_out=Decimal("24.75"), app_fee_bps=100,
                                         app_fee_recipient="tender-fees.near"))
    sent = server.requests_to("/v0/quote")[0].json
    assert sent["appFees"] == [{"recipient": "tender-fees.near", "fee": 100}]
    assert sent["amount"] == "24750000"                 # the exact output is the payout less the fee
    assert quote.amount_in == Decimal("25.25")          # the buyer pays the fee on top: 24.75 / 0.99 × 1.01


def test_no_fee_sends_no_app_fees(provider, server):
    provider.quote(quote_request(app_fee_bps=0, app_fee_recipient="tender-fees.near"))
    assert "appFees" not in server.requests_to("/v0/quote")[0].json


def test_the_local_server_refuses_app_fees_1click_would(server):
    from tests.support.oneclick_server import _app_fees_problem

    for bad in ({"recipient": "tender-fees.near"}, [{"recipient": "Not A Near", "fee": 100}],
                [{"recipient": "tender-fees.near", "fee": "100"}], [{"recipient": "tender-fees.near", "fee": 0}]):
        assert _app_fees_problem(bad) is not None
    assert _app_fees_problem([{"recipient": "tender-fees.near", "fee": 100}]) is None


def test_dry_quote_has_no_deposit_address(provider, server):
    quote = provider.quote(quote_request(dry=True))

    assert server.requests_to("/v0/quote")[0].json["dry"] is True
    assert quote.deposit_address is None and quote.deposit_memo is None
    assert quote.deadline == DEADLINE  # dry answers carry no deadline: ours stands
    assert quote.amount_in == Decimal("25.25")


def test_dry_quote_without_buyer_address_or_payout_wallet_refunds_inside_intents(provider, server):
    quote = provider.quote(quote_request(dry=True, refund_to="", recipient=""))

    sent = server.requests_to("/v0/quote")[0].json
    assert (sent["refundTo"], sent["refundType"]) == ("intents.near", "INTENTS")
    assert (sent["recipient"], sent["recipientType"]) == ("intents.near", "INTENTS")
    assert quote.amount_in == Decimal("25.25")


def test_wet_quote_without_refund_address_is_refused_before_asking(provider, server):
    with pytest.raises(ProviderRejected):
        provider.quote(quote_request(refund_to=""))
    assert server.requests_to("/v0/quote") == []


def test_api_key_is_sent_as_x_api_key_and_wins_over_the_legacy_jwt(server):
    make_provider(server, "legacy-jwt", api_key="the-key").supported_assets()

    assert server.requests[0].headers["x-api-key"] == "the-key"
    assert "authorization" not in server.requests[0].headers


def test_refused_credentials_are_reported_once_per_answer_and_not_retried():
    seen = []
    with OneClickServer(token="right") as strict:
        provider = make_provider(strict, None, api_key="wrong", on_auth_failure=lambda *args: seen.append(args))
        with pytest.raises(base.ProviderAuthFailed):
            provider.quote(quote_request(dry=True))
        assert len(strict.requests) == 1 and [status for status, _ in seen] == [401]


def test_start_up_warns_when_oneclick_has_no_credentials(caplog):
    import providers
    from config import Settings

    with caplog.at_level("WARNING", logger="tender.providers"):
        providers.warn_about_credentials(Settings(swap_provider="oneclick"))
        providers.warn_about_credentials(Settings(swap_provider="oneclick", oneclick_api_key="k"))
    assert [record.getMessage() for record in caplog.records if "0.2% more" in record.getMessage()] != []
    assert len(caplog.records) == 1


def test_without_jwt_no_authorization_header_is_sent(server):
    make_provider(server, None).supported_assets()

    assert "authorization" not in server.requests[0].headers


def test_exact_output_rounds_the_requested_amount_up(provider, server):
    provider.quote(quote_request(amount_out=Decimal("1.0000001"), dry=True))

    assert server.requests_to("/v0/quote")[0].json["amount"] == "1000001"


def test_18_decimal_origin_round_trips_exactly(provider):
    quote = provider.quote(quote_request(origin_asset="eth", amount_out=Decimal("10"), dry=True))

    # 10 USDC (0.9999 USD each) at 2000 USD/ETH plus 1% = 0.005049495 ETH = 5049495000000000 wei
    assert quote.amount_in == Decimal("0.005049495")
    assert type(quote.amount_in) is Decimal and type(quote.amount_in_usd) is Decimal


def test_a_memo_chain_is_learned_from_a_400_asking_for_memo(server, monkeypatch):
    import providers.oneclick as oneclick
    monkeypatch.setattr(oneclick, "MEMO_CHAINS", frozenset())
    provider = make_provider(server)

    first = provider.quote(quote_request(origin_asset="xlm", refund_to=STELLAR_BUYER))
    provider.quote(quote_request(origin_asset="xlm", refund_to=STELLAR_BUYER))

    modes = [request.json["depositMode"] for request in server.requests_to("/v0/quote")]
    assert modes == ["SIMPLE", "MEMO", "MEMO"] and first.deposit_memo
    assert [asset.needs_memo for asset in provider.supported_assets() if asset.code == "xlm"] == [True]


def test_xrp_is_a_memo_chain_from_the_start():
    tokens = [("nep141:xrp.omft.near", "xrp", "XRP", 6, "0.5", None),
              ("nep141:17208628f84f5d6ad33f0da3bbbeb27ffcb398eac501a31bd6ad2011e36133a1", "near", "USDC", 6,
               "0.9999", "17208628f84f5d6ad33f0da3bbbeb27ffcb398eac501a31bd6ad2011e36133a1")]
    with OneClickServer(tokens) as xrp_server:
        quote = make_provider(xrp_server).quote(quote_request(origin_asset="xrp", refund_to="r" + "H" * 30))
        assert [r.json["depositMode"] for r in xrp_server.requests_to("/v0/quote")] == ["MEMO"]
        assert quote.deposit_memo


def test_memo_chain_quote_asks_for_a_memo_and_status_sends_it(provider, server):
    quote = provider.quote(quote_request(origin_asset="xlm", refund_to=STELLAR_BUYER))
    server.script_status(quote.deposit_address, "PENDING_DEPOSIT")
    provider.deposit_status(quote.deposit_address, quote.deposit_memo)

    assert server.requests_to("/v0/quote")[0].json["depositMode"] == "MEMO"
    assert quote.deposit_memo
    assert server.requests_to("/v0/status")[0].query == {
        "depositAddress": quote.deposit_address, "depositMemo": quote.deposit_memo}


@pytest.mark.parametrize("amount, decimals, wire", [
    (Decimal("1.5"), 6, "1500000"),
    (Decimal("0.000001"), 6, "1"),
    (Decimal("1.000000000000000001"), 18, "1000000000000000001"),
    (Decimal("12345678.123456789012345678901234"), 24, "12345678123456789012345678901234"),
])
def test_smallest_unit_conversion_round_trips(amount, decimals, wire):
    assert to_smallest_units(amount, decimals) == wire
    back = from_smallest_units(wire, decimals)
    assert back == amount and type(back) is Decimal


# --- statuses --------------------------------------------------------------------------

@pytest.mark.parametrize("status", base.STATUSES)
def test_every_1click_status_maps_verbatim(provider, server, status):
    server.script_status("addr-1", status)

    assert provider.deposit_status("addr-1").status == status


def test_status_sequence_and_settled_details(provider, server):
    quote = provider.quote(quote_request(origin_asset="eth", amount_out=Decimal("10")))
    server.script_status(quote.deposit_address, "PENDING_DEPOSIT", {
        "status": "SUCCESS",
        "updatedAt": "2030-01-01T12:10:05.250Z",
        "swapDetails": {
            "depositedAmount": "5050000000000000", "depositedAmountUsd": "10.1",
            "amountIn": "5000000000000000", "amountInUsd": "10",
            "amountOut": "10000000", "amountOutUsd": "10.00",
            "refundedAmount": "50000000000000",
            "originChainTxHashes": [{"hash": "0xdeposit", "explorerUrl": ""}],
            "destinationChainTxHashes": [{"hash": "near-payout", "explorerUrl": ""}],
        },
    })

    first = provider.deposit_status(quote.deposit_address)
    second = provider.deposit_status(quote.deposit_address)

    assert first.status == "PENDING_DEPOSIT" and first.amount_in is None
    assert second.status == "SUCCESS"
    assert second.amount_in == Decimal("0.00505")  # what was deposited, not what was swapped
    assert second.amount_in_usd == Decimal("10.1")
    assert second.amount_out == Decimal("10") and second.amount_out_usd == Decimal("10.00")
    assert second.refunded_amount == Decimal("0.00005")
    assert second.origin_tx_hashes == ("0xdeposit",)
    assert second.destination_tx_hashes == ("near-payout",)
    assert second.updated_at == dt.datetime(2030, 1, 1, 12, 10, 5, 250000)
    assert all(type(value) is Decimal for value in (second.amount_in, second.amount_out, second.refunded_amount))


def test_unknown_status_is_unavailable_not_guessed(provider, server):
    server.script_status("addr-1", "HALF_DONE")

    with pytest.raises(ProviderUnavailable, match="HALF_DONE"):
        provider.deposit_status("addr-1")


def test_unknown_deposit_address_is_rejected(provider):
    with pytest.raises(ProviderRejected, match="Deposit address not found"):
        provider.deposit_status("never-quoted")


# --- failures --------------------------------------------------------------------------

def test_slow_answer_times_out_as_unavailable(server):
    provider = make_provider(server, timeout=0.3, retries=1)
    server.inject("/v0/tokens", slow(30), times=None)

    with pytest.raises(ProviderUnavailable, match="timed out"):
        provider.supported_assets()


def test_two_server_errors_then_success(provider, server):
    provider.supported_assets()
    server.inject("/v0/quote", server_error(503), times=2)

    quote = provider.quote(quote_request(dry=True))

    assert quote.amount_in == Decimal("25.25")
    assert len(server.requests_to("/v0/quote")) == 3


def test_endless_server_errors_give_up_after_bounded_attempts(provider, server):
    server.inject("/v0/status", server_error(502), times=None)

    with pytest.raises(ProviderUnavailable, match="502"):
        provider.deposit_status("addr-1")

    assert len(server.requests_to("/v0/status")) == 3


def test_wet_quote_is_not_retried(provider, server):
    provider.supported_assets()
    server.inject("/v0/quote", server_error(503), times=None)

    with pytest.raises(ProviderUnavailable):
        provider.quote(quote_request(dry=False))

    assert len(server.requests_to("/v0/quote")) == 1


def test_malformed_json_is_unavailable(provider, server):
    server.inject("/v0/tokens", malformed_json(), times=None)

    with pytest.raises(ProviderUnavailable, match="malformed"):
        provider.supported_assets()


def check_status(provider):
    return provider.deposit_status("addr-1")


def dry_quote(provider):
    return provider.quote(quote_request(dry=True))


@pytest.mark.parametrize("path, body, call", [
    ("/v0/status", b'{"correlationId": "abc"}', check_status),
    ("/v0/status", b'{"status": "SUCCESS", "swapDetails": {"originChainTxHashes": [{}]}}', check_status),
    ("/v0/quote", b'{"quote": {"amountIn": "1"}}', dry_quote),
    ("/v0/quote", b'{"quote": {"amountIn": "1.5", "amountOut": "25000000"}}', dry_quote),
])
def test_missing_or_mistyped_fields_are_unavailable(provider, server, path, body, call):
    server.script_status("addr-1", "SUCCESS")
    server.inject(path, Fault(body=body), times=None)

    with pytest.raises(ProviderUnavailable, match="malformed"):
        call(provider)


def test_wet_quote_without_deposit_address_is_unavailable(provider, server):
    provider.supported_assets()
    server.inject("/v0/quote", Fault(body=b'{"quote": {"amountIn": "1", "amountOut": "2"}}'))

    with pytest.raises(ProviderUnavailable, match="depositAddress"):
        provider.quote(quote_request(dry=False))


def test_client_error_is_rejected_with_the_providers_message_and_not_retried(provider, server):
    provider.supported_assets()
    server.inject("/v0/quote", rejected(400, "amount is too low"), times=None)

    with pytest.raises(ProviderRejected, match="amount is too low") as raised:
        provider.quote(quote_request(dry=True))

    assert not isinstance(raised.value, ProviderUnavailable)
    assert len(server.requests_to("/v0/quote")) == 1


def test_rate_limit_is_unavailable_but_not_retried_at_once(provider, server):
    server.inject("/v0/status", rejected(429, "too many requests"), times=None)

    with pytest.raises(RateLimited, match="too many requests"):
        provider.deposit_status("addr-1")

    assert len(server.requests_to("/v0/status")) == 1


def test_server_shuts_down_cleanly_with_a_request_still_sleeping():
    with OneClickServer() as server:
        provider = make_provider(server, None, timeout=0.2, retries=0)
        server.inject("/v0/tokens", slow(60), times=None)
        with pytest.raises(ProviderUnavailable):
            provider.supported_assets()

    assert not server.is_running


# --- the strict fake refuses what the real API refuses ----------------------------------

def test_fake_refuses_addresses_that_do_not_match_their_type(server):
    body = {"dry": True, "swapType": "EXACT_OUTPUT", "slippageTolerance": 100, "originAsset": USDC_ETH_ID,
            "depositType": "ORIGIN_CHAIN", "destinationAsset": USDC_NEAR_ID, "amount": "1000000",
            "refundTo": "0xBuyerRefund", "refundType": "ORIGIN_CHAIN", "recipient": "merchant.near",
            "recipientType": "DESTINATION_CHAIN", "deadline": "2030-01-01T00:00:00.000Z"}
    session = requests.Session()
    session.trust_env = False

    def ask(**over):
        return session.post(server.url + "/v0/quote", json={**body, **over}, timeout=5)

    assert ask().status_code == 400 and "refundTo" in ask().json()["message"]
    assert ask(refundTo="").json() == {"message": "refundTo should not be empty"}
    assert ask(refundTo=BUYER_REFUND, swapType="EXACT").status_code == 400
    assert ask(refundTo=BUYER_REFUND, recipient="Merchant NEAR").status_code == 400   # not a NEAR account
    assert ask(refundTo="merchant.near", refundType="INTENTS").status_code == 200
    wet = [ask(refundTo=BUYER_REFUND, dry=False).json()["quote"] for _ in range(2)]
    assert wet[0]["depositAddress"] != wet[1]["depositAddress"]                      # fresh per wet quote
    assert wet[0]["deadline"] != body["deadline"]                                    # not echoed
    assert session.get(server.url + "/v0/status", params={"depositAddress": "nowhere"}, timeout=5).json() == {
        "message": "Deposit address not found"}


def test_fake_answers_401_to_a_wrong_token():
    with OneClickServer(token="right") as strict:
        assert make_provider(strict, "right").supported_assets()
        with pytest.raises(base.ProviderError):
            make_provider(strict, "wrong").supported_assets()
        assert strict.requests[-1].headers["authorization"] == "Bearer wrong"
