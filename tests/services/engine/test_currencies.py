"""Money in the merchant's own currency (docs/currencies.md): the rate is fixed by the buyer's commit
and everything after it (paid, received, settlement, refund funding) is at that rate, whatever the
rates do later; no usable rate is a 503, never a par or stale rate."""
import datetime as dt
from decimal import Decimal

import pytest

from core.clock import utcnow
from models.base import db
from models.exchange_rates import ExchangeRate
from models.transactions import Transaction
from services.engine import exchange_rates
from tests.blueprints.assertions import assert_error
from tests.payflow import poll_until_quiet, run_pipeline

BUYER = {"origin_asset": "usdc.eth", "refund_to": "0x" + "b" * 40}


def set_rate(currency, rate):
    with db.connection_context():
        exchange_rates.set_sandbox_rate(currency, None if rate is None else Decimal(rate), now=utcnow())


def create(client, auth, amount, currency):
    response = client.post("/v1/invoices", json={"amount": amount, "currency": currency}, headers=auth)
    assert response.status_code == 201, response.json
    return response.json["id"]


def quote(client, invoice_id, *, dry):
    return client.post(f"/v1/public/invoices/{invoice_id}/quote", json={**BUYER, "dry": dry})


def pay(client, auth, invoice_id):
    assert client.post(f"/v1/test_helpers/invoices/{invoice_id}/pay", json={}, headers=auth).status_code == 202
    run_pipeline()


def test_a_eur_invoice_is_settled_at_the_rate_its_commit_fixed(client, auth):
    set_rate("EUR", "1.08")
    invoice_id = create(client, auth, "100.00", "EUR")
    estimate = quote(client, invoice_id, dry=True).json
    assert estimate["estimate"]["estimate"] is True
    assert estimate["estimate"]["exchange_rate"] == {"from": "EUR", "to": "USD", "rate": "1.080", "source": "sandbox"}
    assert (estimate["estimate"]["payout_amount"], estimate["quote"]["amount_out"]) == ("108.00", "108.00")
    assert estimate["invoice"]["exchange_rate"] is None            # nothing fixed by a dry quote
    committed = quote(client, invoice_id, dry=False)
    assert committed.status_code == 200, committed.json
    assert committed.json["quote"]["amount_out"] == "108.00"
    set_rate("EUR", "1.20")                                          # after the commit: changes nothing
    pay(client, auth, invoice_id)
    invoice = client.get(f"/v1/invoices/{invoice_id}", headers=auth).json
    assert invoice["exchange_rate"]["rate"] == "1.080" and invoice["exchange_rate"]["fixed_at"]
    assert (invoice["status"], invoice["payout_amount"], invoice["fee_bps"], invoice["fee_amount"]) == \
        ("paid", "108.00", 0, None)
    status = client.get(f"/v1/invoices/{invoice_id}/status", headers=auth).json
    assert status["exchange_rate"] == invoice["exchange_rate"]
    # The buyer paid the payout and the 0.5% swap fee: 108.54 USD is 100.50 EUR at 1.08.
    assert (status["paid_amount"], status["received_amount"], status["difference_amount"]) == \
        ("100.50", "100.00", "-0.50")
    with db.connection_context():
        settlement = Transaction.get((Transaction.type == "settlement"))
    assert settlement.amount == Decimal("108")


def test_a_yen_invoice_is_priced_and_paid_in_whole_yen(client, auth):
    set_rate("JPY", "0.0066")
    invoice_id = create(client, auth, "1500", "JPY")
    assert quote(client, invoice_id, dry=False).json["quote"]["amount_out"] == "9.90"
    pay(client, auth, invoice_id)
    status = client.get(f"/v1/invoices/{invoice_id}/status", headers=auth).json
    assert (status["payout_amount"], status["received_amount"], status["difference_amount"]) == \
        ("9.90", "1500", "-8")
    assert status["paid_amount"] == "1508"


def test_a_partial_refund_is_funded_at_the_fixed_rate(client, auth):
    set_rate("EUR", "1.08")
    invoice_id = create(client, auth, "100.00", "EUR")
    quote(client, invoice_id, dry=False)
    set_rate("EUR", "1.20")
    pay(client, auth, invoice_id)
    refund = client.post(f"/v1/invoices/{invoice_id}/refunds", json={"amount": "25.00"}, headers=auth)
    assert refund.status_code == 201, refund.json
    assert (refund.json["amount"], refund.json["currency"], refund.json["funding"]["amount"]) == \
        ("25.00", "EUR", "27.00")


def test_no_usable_rate_refuses_the_quote_but_not_the_invoice(client, auth):
    set_rate("EUR", None)
    invoice_id = create(client, auth, "10.00", "EUR")                   # its rate is fixed at the commit
    for dry in (True, False):
        response = quote(client, invoice_id, dry=dry)
        assert_error(response, 503, "exchange_rate_unavailable")
        assert response.headers["Retry-After"]
    health = client.get("/health").json
    assert (health["status"], health["components"]["exchange_rates"]) == ("degraded", "degraded")
    assert client.get(f"/checkout/{invoice_id}").status_code == 200
    set_rate("EUR", "1.0842")
    assert quote(client, invoice_id, dry=False).status_code == 200
    assert client.get("/health").json["components"]["exchange_rates"] == "ok"


def test_a_usd_invoice_stays_at_par_without_any_rate(client, auth):
    with db.connection_context():
        ExchangeRate.delete().execute()
    invoice_id = create(client, auth, "10.00", "USD")
    assert quote(client, invoice_id, dry=False).json["quote"]["amount_out"] == "10.00"
    invoice = client.get(f"/v1/invoices/{invoice_id}", headers=auth).json
    assert (invoice["exchange_rate"], invoice["payout_amount"]) == (None, "10.00")


POLICY = exchange_rates.RatePolicy(("ecb", "exchangerate_api"), None, 100)


def store_rate(source, currency, rate, as_of):
    ExchangeRate.delete().where((ExchangeRate.source == source) & (ExchangeRate.currency == currency)).execute()
    ExchangeRate.create(source=source, currency=currency, rate=Decimal(rate), as_of=as_of, fetched_at=as_of)


@pytest.mark.parametrize("ecb_age_hours, other_rate, expected", [
    (1, "1.0850", ("1.0842", "ecb")),            # both fresh and within 100 bps: the preferred source
    (1, "1.1000", None),                          # 146 bps apart: no rate at all
    (200, "1.0850", ("1.085", "exchangerate_api")),   # the preferred one is stale: the other alone
])
def test_freshness_and_agreement_decide_the_rate(app, ecb_age_hours, other_rate, expected):
    now = utcnow()
    with db.connection_context():
        store_rate("ecb", "EUR", "1.0842", now - dt.timedelta(hours=ecb_age_hours))
        store_rate("exchangerate_api", "EUR", other_rate, now - dt.timedelta(hours=2))
        if expected is None:
            with pytest.raises(Exception, match="No current EUR exchange rate"):
                exchange_rates.usd_value("EUR", POLICY, now=now)
        else:
            rate, source = exchange_rates.usd_value("EUR", POLICY, now=now)
            assert (str(rate.normalize()), source) == expected


def test_every_source_stale_is_no_rate(app):
    now = utcnow()
    with db.connection_context():
        store_rate("ecb", "EUR", "1.0842", now - dt.timedelta(days=5))
        store_rate("exchangerate_api", "EUR", "1.0842", now - dt.timedelta(days=2))
        with pytest.raises(Exception, match="exchange rate"):
            exchange_rates.usd_value("EUR", POLICY, now=now)
        assert exchange_rates.health(("USD", "EUR"), POLICY, now=now) == "degraded"
        assert exchange_rates.health(("USD",), POLICY, now=now) == "ok"
