"""The operator's fee (docs/operations.md#the-operators-fee): fixed at the commit, borne by the merchant,
shown on the invoice, the statement and the exports, and applied by the sandbox as 1Click does."""
import csv
import datetime as dt
from decimal import Decimal
import io

import pytest

from core.clock import utcnow
from models.base import db
from models.stores import Store
from models.transactions import Transaction
from services.accounts import stores
from services.engine import exchange_rates
from tests.payflow import run_pipeline
from tests.support.statement_oracle import roll_up_checked_after_each_test

roll_up_checked = pytest.fixture(autouse=True)(roll_up_checked_after_each_test)
BUYER = {"origin_asset": "usdc.eth", "refund_to": "0x" + "b" * 40}


def paid(client, auth, amount, currency="USD"):
    invoice_id = client.post("/v1/invoices", json={"amount": amount, "currency": currency}, headers=auth).json["id"]
    committed = client.post(f"/v1/public/invoices/{invoice_id}/quote", json={**BUYER, "dry": False})
    assert committed.status_code == 200, committed.json
    assert client.post(f"/v1/test_helpers/invoices/{invoice_id}/pay", json={}, headers=auth).status_code == 202
    run_pipeline()
    return client.get(f"/v1/invoices/{invoice_id}/status", headers=auth).json, committed.json


def test_a_usd_invoice_settles_99_to_the_merchant_with_a_fee_of_1(client, auth, fee_of_100_bps):
    status, committed = paid(client, auth, "100.00")
    assert committed["quote"]["amount_out"] == "99.00"                  # the exact output is the payout less the fee
    assert committed["quote"]["amount_in"] == "100.50"                  # the buyer pays the invoice's value
    assert (status["fee_bps"], status["fee_amount"], status["payout_amount"]) == (100, "1.00", "100.00")
    assert (status["paid_amount"], status["received_amount"], status["difference_amount"]) == \
        ("100.50", "99.00", "-1.50")
    with db.connection_context():
        settlement = Transaction.get(Transaction.type == "settlement")
    assert settlement.amount == Decimal("99")
    day = settlement.created_at.date().isoformat()      # its statement day, even when a UTC midnight has passed since
    [row] = client.get("/v1/reports/settlements", headers=auth, query_string={"from": day, "to": day}).json["data"]
    assert (row["fees"], row["received"], row["difference"]) == ("1.00", "99.00", "-1.50")
    window = {"created_after": (utcnow() - dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "created_before": (utcnow() + dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")}
    exported = next(csv.DictReader(io.StringIO(client.get(
        "/v1/exports/invoices", headers=auth, query_string=window).get_data(as_text=True))))
    assert (exported["fee_bps"], exported["fee_amount"], exported["payout_amount"]) == ("100", "1.00", "100.00")


def test_a_euro_invoice_bears_the_fee_in_euros(client, auth, fee_of_100_bps):
    with db.connection_context():
        exchange_rates.set_sandbox_rate("EUR", Decimal("1.08"), now=utcnow())
    status, committed = paid(client, auth, "100.00", "EUR")
    assert committed["quote"]["amount_out"] == "106.92"
    assert (status["fee_amount"], status["received_amount"], status["payout_amount"]) == ("1.00", "99.00", "108.00")


def test_a_stores_own_fee_and_no_fee(client, auth, store, fee_of_100_bps):
    with db.connection_context():
        stores.set_fee(Store.get_by_id(store.id), 0, now=utcnow())
    status, committed = paid(client, auth, "10.00")
    assert (status["fee_bps"], status["fee_amount"], status["received_amount"]) == (0, None, "10.00")
    with db.connection_context():
        stores.set_fee(Store.get_by_id(store.id), 250, now=utcnow())
    status, _ = paid(client, auth, "10.00")
    assert (status["fee_bps"], status["fee_amount"], status["received_amount"]) == (250, "0.25", "9.75")


def test_a_stores_fee_without_an_account_to_pay_it_to_is_no_fee(client, auth, store):
    with db.connection_context():
        stores.set_fee(Store.get_by_id(store.id), 100, now=utcnow())         # OPERATOR_FEE_ACCOUNT unset here
    status, committed = paid(client, auth, "10.00")
    assert (status["fee_bps"], status["fee_amount"], committed["quote"]["amount_out"]) == (0, None, "10.00")


def test_the_fee_is_fixed_by_the_commit(client, auth, store, fee_of_100_bps):
    invoice_id = client.post("/v1/invoices", json={"amount": "10.00"}, headers=auth).json["id"]
    client.post(f"/v1/public/invoices/{invoice_id}/quote", json={**BUYER, "dry": False})
    with db.connection_context():
        stores.set_fee(Store.get_by_id(store.id), 500, now=utcnow())
    client.post(f"/v1/test_helpers/invoices/{invoice_id}/pay", json={}, headers=auth)
    run_pipeline()
    status = client.get(f"/v1/invoices/{invoice_id}/status", headers=auth).json
    assert (status["fee_bps"], status["received_amount"]) == (100, "9.90")
