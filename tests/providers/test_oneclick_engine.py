"""Tender with SWAP_PROVIDER=oneclick against the strict 1Click fake: the HTTP routes and the
poller, in-process (tests/support/oneclick_server.py; the multi-process run is tests/e2e/test_oneclick_stack.py)."""
import dataclasses
import datetime as dt
from decimal import Decimal
import logging

import pytest

import providers
from core.clock import utcnow
from infra import metrics, provider_health, queues
from models.invoices import Invoice
from models.polls import PollState
from services.engine import poll_state, polling
from tests import factories
from tests.support.oneclick_server import OneClickServer

BUYER_REFUND = "0x52908400098527886E0F7030069857D2E4169EE7"


@pytest.fixture
def fake():
    with OneClickServer(token="right-key") as server:
        yield server


@pytest.fixture
def use_oneclick(app, fake):
    """Point the app at the fake; `use_oneclick(key)` switches the credentials."""
    sandbox = app.extensions["tender.settings"]

    def configure(api_key="right-key"):
        app.extensions["tender.settings"] = dataclasses.replace(
            sandbox, swap_provider="oneclick", oneclick_base_url=fake.url, oneclick_api_key=api_key, oneclick_jwt=None)
        return providers.shared(app.extensions["tender.settings"])

    yield configure
    app.extensions["tender.settings"] = sandbox


def quote(client, invoice, **body):
    return client.post(f"/v1/public/invoices/{invoice.public_id}/quote",
                       json={"origin_asset": "usdc.eth", "refund_to": None, "dry": True, **body})


def test_price_estimate_without_a_buyer_address_is_quoted(client, store, use_oneclick, fake):
    use_oneclick()
    invoice = factories.make_invoice(store)

    response = quote(client, invoice)

    assert response.status_code == 200, response.json
    assert fake.requests_to("/v0/quote")[0].json["refundType"] == "INTENTS"
    assert fake.requests_to("/v0/quote")[0].headers["x-api-key"] == "right-key"


def test_refused_credentials_are_an_operator_outage_not_the_buyers_mistake(client, store, use_oneclick, caplog):
    use_oneclick("wrong-key")
    invoice = factories.make_invoice(store)
    caplog.set_level(logging.ERROR, logger="tender.provider")

    answers = [quote(client, invoice, refund_to=BUYER_REFUND, dry=dry) for dry in (True, False, True)]

    for response in answers:
        assert (response.status_code, response.json["error"]["code"]) == (503, "checkout_unavailable")
        assert "Retry-After" in response.headers and "wrong" not in response.get_data(as_text=True)
    health = client.get("/health")
    assert health.status_code == 200
    assert health.json["components"]["provider"] == "degraded" and health.json["status"] == "degraded"
    assert len([r for r in caplog.records if r.name == "tender.provider"]) == 1   # once a minute, not per call
    metrics.flush()
    assert "tender_provider_auth_failures_total" in metrics.render({})
    assert queues.redis().ttl(provider_health.AUTH_FAILED_KEY) <= provider_health.DEGRADED_SECONDS


def test_polls_keep_their_pace_while_credentials_are_refused(store, use_oneclick, fake):
    provider = use_oneclick()
    now = utcnow()
    invoice = factories.make_invoice(store)
    from services.engine import quotes
    invoice, _ = quotes.commit(invoice, provider, origin_asset="usdc.eth", refund_to=BUYER_REFUND, now=now)
    provider = use_oneclick("wrong-key")

    polled = polling.poll_due("chain", provider, clock=lambda: now, base_seconds=10, batch_size=10, concurrency=1)

    assert polled == 1
    assert poll_state.next_poll_of(invoice.id) <= now + dt.timedelta(seconds=10)
    assert fake.requests_to("/v0/status")[-1].headers["x-api-key"] == "wrong-key"


def test_a_committed_invoice_is_paid_even_after_its_asset_left_the_token_list(store, use_oneclick, fake):
    provider = use_oneclick()
    now = utcnow()
    from services.engine import quotes
    invoice, committed = quotes.commit(factories.make_invoice(store), provider, origin_asset="usdc.eth",
                                       refund_to=BUYER_REFUND, now=now)
    assert (invoice.origin_decimals, invoice.destination_decimals) == (6, 6)
    fake.tokens = [token for token in fake.tokens if token[2] != "USDC" or token[1] != "eth"]
    provider._assets_fetched_at = None   # as after the token list's cache went stale
    due = str(int(committed.amount_in * 10 ** 6))
    fake.script_status(invoice.deposit_address, {
        "status": "SUCCESS", "swapDetails": {
            "amountIn": due, "depositedAmount": due, "amountOut": "10000000", "refundedAmount": "0",
            "originChainTxHashes": [{"hash": "0xdeposit", "explorerUrl": ""}],
            "destinationChainTxHashes": [{"hash": "payout", "explorerUrl": ""}]}})

    polling.poll_due("chain", provider, clock=lambda: now, base_seconds=10, batch_size=10, concurrency=1)

    assert Invoice.get_by_id(invoice.id).status == "paid"


def test_deposit_hash_is_the_first_seen_and_paid_amount_is_net_of_the_slippage_refund(store, use_oneclick, fake):
    from models.transactions import Transaction
    from services.engine import quotes
    provider = use_oneclick()
    now = utcnow()
    invoice, committed = quotes.commit(factories.make_invoice(store), provider, origin_asset="usdc.eth",
                                       refund_to=BUYER_REFUND, now=now)
    deposited = str(int(committed.amount_in * 10 ** 6))            # carries the 1% slippage buffer
    refunded = str(int(committed.amount_in * 10 ** 6) - int(committed.amount_in / Decimal("1.01") * 10 ** 6))
    hashes = lambda *names: [{"hash": name, "explorerUrl": ""} for name in names]  # noqa: E731
    fake.script_status(invoice.deposit_address,
                       {"status": "KNOWN_DEPOSIT_TX", "swapDetails": {
                           "depositedAmount": deposited, "depositedAmountUsd": "10.10",
                           "originChainTxHashes": hashes("0xdeposit")}},
                       {"status": "SUCCESS", "swapDetails": {
                           "amountIn": deposited, "depositedAmount": deposited, "depositedAmountUsd": "10.10",
                           "refundedAmount": refunded, "refundedAmountUsd": "0.10",
                           "amountOut": "10000000", "amountOutUsd": "10.00",
                           "originChainTxHashes": hashes("0xslippage-refund", "0xdeposit"),   # no promised order
                           "destinationChainTxHashes": hashes("payout")}})

    for minutes in (0, 1):
        later = now + dt.timedelta(minutes=minutes)
        PollState.update(next_poll_at=later).where(PollState.invoice == invoice.id).execute()
        polling.poll_due("chain", provider, clock=lambda: later, base_seconds=10, batch_size=10, concurrency=1)

    paid = Invoice.get_by_id(invoice.id)
    assert (paid.status, paid.transaction_hash) == ("paid", "0xdeposit")
    assert paid.paid_amount == Decimal("10.00")                      # not 10.10: the buffer came back
    origins = Transaction.select().where((Transaction.invoice == invoice.id) & (Transaction.type == "payment_origin"))
    assert [tx.transaction_hash for tx in origins] == ["0xdeposit"]


def test_a_merchant_refund_over_1click_from_the_route_to_succeeded(client, auth, store, use_oneclick, fake):
    """The refund route quotes EXACT_INPUT through the adapter, and the refund poller follows the
    reverse swap's status to `succeeded` with its `refund` transaction (docs/refunds.md)."""
    provider = use_oneclick()
    now = utcnow()
    invoice = factories.make_invoice(store, status="paid", origin_asset="usdc.eth", refund_to=BUYER_REFUND,
                                     paid_amount=Decimal("20.00"), received_amount=Decimal("20.00"), paid_at=now)
    created = client.post(f"/v1/invoices/{invoice.public_id}/refunds", json={"amount": "8.00"}, headers=auth)
    assert created.status_code == 201, created.json
    sent = fake.requests_to("/v0/quote")[0].json
    assert (sent["swapType"], sent["recipient"], sent["refundTo"]) == ("EXACT_INPUT", BUYER_REFUND, "merchant.near")
    address = created.json["funding"]["deposit_address"]
    fake.script_status(address, {"status": "SUCCESS", "swapDetails": {
        "amountIn": "8000000", "amountOut": "7990000", "originChainTxHashes": [{"hash": "near-funding"}],
        "destinationChainTxHashes": [{"hash": "0xdelivered"}]}})
    from tests.payflow import poll_until_quiet

    poll_until_quiet("refunds", provider=provider)
    done = client.get(f"/v1/refunds/{created.json['id']}", headers=auth).json
    assert (done["status"], done["amount_out"], done["transaction_hash"]) == ("succeeded", "7.99", "0xdelivered")
    assert done["funding"]["transaction_hash"] == "near-funding"
    refund_txns = client.get(f"/v1/transactions?type=refund&invoice_id={invoice.public_id}", headers=auth).json
    assert [(t["transaction_hash"], t["refund_id"]) for t in refund_txns["data"]] == [("0xdelivered", done["id"])]


def test_an_unreachable_provider_is_reported_by_health_and_logged_once(client, store, app, use_oneclick, caplog,
                                                                      monkeypatch):
    """1Click not answering at all: buyers get 503, /health says so, one warning a minute; the next
    answer clears it."""
    monkeypatch.setattr(provider_health, "_last_logged", {})       # this process's minute starts now
    use_oneclick()
    app.extensions["tender.settings"] = dataclasses.replace(
        app.extensions["tender.settings"], oneclick_base_url="http://127.0.0.1:1")     # nothing listens there
    caplog.set_level(logging.WARNING, logger="tender.provider")
    invoice = factories.make_invoice(store)

    answers = [client.get("/v1/public/assets"), quote(client, invoice)]

    assert [(a.status_code, a.json["error"]["code"]) for a in answers] == [(503, "checkout_unavailable")] * 2
    health = client.get("/health")
    assert health.status_code == 200 and health.json["status"] == "degraded"
    assert health.json["components"]["provider"] == "unavailable"
    assert len([r for r in caplog.records if "unreachable" in r.getMessage()]) == 1
    use_oneclick()                                     # 1Click is back: its first answer clears the mark
    assert client.get("/v1/public/assets").status_code == 200
    assert client.get("/health").json["components"]["provider"] == "ok"
