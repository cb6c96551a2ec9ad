"""An invoice's money on its dashboard page as it is: the amount in its currency, the rate (an
estimate before the buyer commits, then the fixed one with its source and time), the payout, the
operator's fee, what was received and the difference, each in its currency's minor units."""
from __future__ import annotations

from decimal import Decimal
import html
import re

from core.clock import utcnow
from models.base import db
from services.engine import exchange_rates
from tests.payflow import run_pipeline

BUYER = {"origin_asset": "usdc.eth", "refund_to": "0x" + "b" * 40}
_FACT = re.compile(r"<dt>([^<]+)</dt><dd>([^<]*)</dd>")


def _rate(currency, rate):
    with db.connection_context():
        exchange_rates.set_sandbox_rate(currency, None if rate is None else Decimal(rate), now=utcnow())


def _facts(owner_client, invoice_id) -> dict:
    page = owner_client.get(f"/dashboard/invoices/{invoice_id}")
    assert page.status_code == 200
    return {label: html.unescape(text) for label, text in _FACT.findall(page.get_data(as_text=True))}


def _paid(client, auth, amount, currency):
    invoice_id = client.post("/v1/invoices", json={"amount": amount, "currency": currency}, headers=auth).json["id"]
    assert client.post(f"/v1/public/invoices/{invoice_id}/quote", json={**BUYER, "dry": False}).status_code == 200
    assert client.post(f"/v1/test_helpers/invoices/{invoice_id}/pay", json={}, headers=auth).status_code == 202
    run_pipeline()
    return client.get(f"/v1/invoices/{invoice_id}/status", headers=auth).json | {"id": invoice_id}


def test_before_the_commit_the_rate_payout_and_fee_are_an_estimate(owner_client, auth, fee_of_100_bps):
    _rate("EUR", "1.08")
    invoice_id = owner_client.post("/v1/invoices", json={"amount": "100.00", "currency": "EUR"}, headers=auth).json["id"]
    facts = _facts(owner_client, invoice_id)
    assert facts["Amount"] == "100.00 EUR"
    assert facts["Exchange rate"] == "estimate: 1 EUR = 1.080 USD today (from sandbox), fixed when the buyer commits"
    assert facts["Payout"] == "estimate: 108.00 usdc.near" and facts["Fee"] == "estimate: 100 bps"
    assert "Received" not in facts and "Difference" not in facts


def test_after_the_commit_the_fixed_rate_with_its_source_and_time_and_the_fee(owner_client, auth, fee_of_100_bps):
    _rate("EUR", "1.08")
    status = _paid(owner_client, auth, "100.00", "EUR")
    _rate("EUR", "1.50")                                      # later rates change nothing fixed
    facts = _facts(owner_client, status["id"])
    fixed_at = status["exchange_rate"]["fixed_at"]
    assert facts["Exchange rate"] == f"1 EUR = 1.080 USD (from sandbox, fixed {fixed_at})"
    assert facts["Payout"] == "108.00 usdc.near" and facts["Fee"] == "1.00 EUR (100 bps)"
    assert facts["Received"] == f"{status['received_amount']} EUR" == "99.00 EUR"
    assert facts["Difference"] == f"{status['difference_amount']} EUR"
    assert facts["Paid"] == f"{status['paid_amount']} EUR"


def test_yen_are_shown_without_decimals_and_par_says_so(owner_client, auth, fee_of_100_bps):
    _rate("JPY", "0.0066")
    yen = _facts(owner_client, _paid(owner_client, auth, "1500", "JPY")["id"])
    assert yen["Amount"] == "1500 JPY" and re.fullmatch(r"\d+ JPY \(100 bps\)", yen["Fee"])
    assert re.fullmatch(r"-?\d+ JPY", yen["Received"]) and re.fullmatch(r"-?\d+ JPY", yen["Difference"])
    dollars = _facts(owner_client, _paid(owner_client, auth, "10.00", "USD")["id"])
    assert dollars["Exchange rate"] == "none: paid out at par" and dollars["Fee"] == "0.10 USD (100 bps)"


def test_no_usable_rate_is_said_not_a_500(owner_client, auth):
    _rate("EUR", "1.08")
    invoice_id = owner_client.post("/v1/invoices", json={"amount": "5.00", "currency": "EUR"}, headers=auth).json["id"]
    _rate("EUR", None)
    facts = _facts(owner_client, invoice_id)
    assert facts["Exchange rate"] == "no current EUR rate: checkout is briefly unavailable"
