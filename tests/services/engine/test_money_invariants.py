"""Money invariants of rates and fees, property-tested through the real engine (sandbox provider, the
pollers, both databases): for random currencies, rates, fees, deposits (short, exact, over) and
merchant refunds, what the merchant receives, the operator's fee and what goes back to the buyer add
up to what was paid, within one minor unit, and never in the merchant's or operator's favour beyond it."""
import dataclasses
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal

from hypothesis import HealthCheck, given, note, settings as hyp_settings, strategies as st
import pytest

from core import money
from core.clock import utcnow
from models.base import db
from models.invoices import Invoice
from models.stores import Store
from models.transactions import Transaction
from services.accounts import stores
from services.engine import exchange_rates
from services.engine.payout_terms import PAYOUT_UNIT
from tests.payflow import poll_until_quiet, run_pipeline
from tests.support.refund_books import assert_refund_books_agree
from tests.support.statement_oracle import roll_up_checked_after_each_test

roll_up_checked = pytest.fixture(autouse=True)(roll_up_checked_after_each_test)
BUYER = {"origin_asset": "usdc.eth", "refund_to": "0x" + "b" * 40}
CURRENCIES = ("USD", "EUR", "JPY", "KWD")          # the tests' SUPPORTED_CURRENCIES


@pytest.fixture
def fee_account(app):
    settings = app.extensions["tender.settings"]
    app.extensions["tender.settings"] = dataclasses.replace(settings, operator_fee_account="tender-fees.near")
    yield
    app.extensions["tender.settings"] = settings


@st.composite
def payments(draw):
    currency = draw(st.sampled_from(CURRENCIES))
    places = money.fiat_places(currency)
    minor_units = draw(st.integers(min_value=1, max_value=10 ** 7))
    amount = Decimal(minor_units).scaleb(-places)
    # From the rate at which one minor unit is worth ten micro-dollars (the payout's unit) up to 5 USD a unit:
    # below that a currency's minor unit is finer than the stablecoin can pay (docs/decisions.md).
    lowest = int(Decimal("0.00001") / money.minor_unit(currency) * 10 ** 6)
    rate = Decimal(draw(st.integers(min_value=max(lowest, 1), max_value=5_000_000))).scaleb(-6)
    return {"currency": currency, "amount": amount, "rate": rate,
            "fee_bps": draw(st.integers(min_value=0, max_value=500)),
            "outcome": draw(st.sampled_from(["success", "underpaid", "overpaid"])),
            "refund_share": draw(st.integers(min_value=1, max_value=100))}


def _within_one_minor_unit(left: Decimal, right: Decimal, currency: str) -> bool:
    return abs(left - right) <= money.minor_unit(currency)


@hyp_settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=payments())
def test_payout_fee_and_refunds_add_up_to_what_was_paid(client, auth, store, fee_account, case):
    note(repr(case))                # the fixtures' reprs are blank: say which case failed
    currency, amount = case["currency"], case["amount"]
    unit = money.minor_unit(currency)
    with db.connection_context():
        if currency != "USD":
            exchange_rates.set_sandbox_rate(currency, case["rate"], now=utcnow())
        stores.set_fee(Store.get_by_id(store.id), case["fee_bps"], now=utcnow())
    text = money.format_fiat(amount, currency)
    invoice_id = client.post("/v1/invoices", json={"amount": text, "currency": currency}, headers=auth).json["id"]
    committed = client.post(f"/v1/public/invoices/{invoice_id}/quote", json={**BUYER, "dry": False})
    if committed.status_code != 200:      # a payout below the provider's smallest unit cannot be quoted
        assert committed.status_code == 400, committed.json
        return
    paid = client.post(f"/v1/test_helpers/invoices/{invoice_id}/pay", json={"outcome": case["outcome"]}, headers=auth)
    assert paid.status_code == 202, paid.json
    run_pipeline()
    invoice = client.get(f"/v1/invoices/{invoice_id}", headers=auth).json
    status = client.get(f"/v1/invoices/{invoice_id}/status", headers=auth).json
    rate = Decimal(invoice["exchange_rate"]["rate"]) if invoice["exchange_rate"] else Decimal(1)
    payout = Decimal(invoice["payout_amount"])
    assert abs(payout - amount * rate) <= PAYOUT_UNIT / 2                       # the payout is the amount at the rate
    with db.connection_context():
        moved = {txn.type: txn.amount for txn in Transaction.select().join(Invoice)
                 .where(Invoice.public_id == invoice_id)}
    if case["outcome"] == "underpaid":                                        # nothing reached the merchant
        assert (status["status"], status["received_amount"], "settlement" in moved) == ("underpaid", None, False)
        assert Decimal(status["paid_amount"]) <= amount                          # within rounding of half
        return
    assert status["status"] == "paid" and status["swap_status"] is None, status
    delivered = moved["settlement"]
    fee_out = (payout * case["fee_bps"] / 10000)
    assert delivered == (payout - fee_out).quantize(PAYOUT_UNIT, rounding=ROUND_DOWN)  # merchant + operator = payout
    received, fee = Decimal(status["received_amount"]), Decimal(status["fee_amount"] or 0)
    assert _within_one_minor_unit(received + fee, amount, currency)           # the invoice's value, split in two
    assert received + fee <= amount + unit                                    # never more than it was worth
    assert Decimal(status["paid_amount"]) + unit >= received + fee            # never more out than in
    if case["outcome"] == "overpaid":                                         # the excess went back to the buyer
        assert 0 < moved["refund"] < moved["payment_origin"]
    _merchant_refund_is_funded_at_the_fixed_rate(client, auth, invoice_id, received, rate, case, currency)


def _merchant_refund_is_funded_at_the_fixed_rate(client, auth, invoice_id, received, rate, case, currency):
    share = (received * case["refund_share"] / 100).quantize(money.minor_unit(currency), rounding=ROUND_DOWN)
    if share <= 0:
        return
    if (share * rate).quantize(PAYOUT_UNIT, rounding=ROUND_HALF_UP) == 0:
        too_small = client.post(f"/v1/invoices/{invoice_id}/refunds", headers=auth,
                                json={"amount": money.format_fiat(share, currency)})
        assert too_small.status_code == 400                                   # refused, never a zero funding
        return
    refund = client.post(f"/v1/invoices/{invoice_id}/refunds",
                         json={"amount": money.format_fiat(share, currency)}, headers=auth)
    assert refund.status_code == 201, refund.json
    funding = Decimal(refund.json["funding"]["amount"])
    assert abs(funding - share * rate) <= PAYOUT_UNIT / 2
    rest = received - share + money.minor_unit(currency)                      # one unit more than is left
    over = client.post(f"/v1/invoices/{invoice_id}/refunds",
                       json={"amount": money.format_fiat(rest, currency)}, headers=auth)
    assert over.status_code == 400 and over.json["error"]["code"] == "refund_exceeds_refundable"
    _the_refund_reaches_the_buyer_and_every_book_agrees(client, auth, invoice_id, refund.json["id"], share, funding)


def _the_refund_reaches_the_buyer_and_every_book_agrees(client, auth, invoice_id, refund_id, share, funding):
    """The merchant funds the refund; the buyer gets it, and what went out never exceeds what came in."""
    funded = client.post(f"/v1/test_helpers/refunds/{refund_id}/fund", json={}, headers=auth)
    assert funded.status_code == 202, funded.json
    poll_until_quiet("refunds", rounds=4)         # a funding's whole story is at most three sandbox reads
    refund = client.get(f"/v1/refunds/{refund_id}", headers=auth).json
    assert refund["status"] == "succeeded", refund
    assert assert_refund_books_agree(client, auth, invoice_id) == share        # the buyer got the share, in every book
    with db.connection_context():
        sent = [txn.amount for txn in Transaction.select().join(Invoice)
                .where((Invoice.public_id == invoice_id) & (Transaction.type == "refund")
                       & Transaction.refund.is_null(False))]
    # One delivery, of at most what the merchant sent (the swap to the buyer's asset costs its slippage).
    assert len(sent) == 1 and 0 < sent[0] <= funding, (sent, funding)
    assert Decimal(refund["amount_out"]) == sent[0]
