"""Money in the merchant's own currency on the real stack (gunicorn, `rq worker`, `rq cron` on
PostgreSQL and Redis; skipped without TEST_DATABASE_URL and TEST_REDIS_URL): a EUR invoice committed at
1.08 settles at 1.08 though the operator sets 1.20 before it is paid, a JPY invoice of 1500 is paid, a
partial refund of the EUR invoice is funded at 1.08, a USD 100.00 invoice under OPERATOR_FEE_BPS=100
settles 99.00 with a fee of 1.00, and each store's statement and exports reconcile with all of it.

Setup goes through the operator CLI, traffic through HTTP, as the operator and merchant would."""
from __future__ import annotations

from collections import defaultdict
import csv
import datetime as dt
from decimal import Decimal
import io
import json
import subprocess

import pytest
import requests

from tests.e2e.test_multiprocess import BIN, DATABASE_URL, REDIS_URL, ROOT, Processes, _env, start_worker
from tests.support.contract import checked_session
from tests.support.polling import free_port, wait_for

pytestmark = pytest.mark.skipif(not (DATABASE_URL and REDIS_URL),
                                reason="needs TEST_DATABASE_URL and TEST_REDIS_URL (the real stack)")
FEE = {"OPERATOR_FEE_BPS": "100", "OPERATOR_FEE_ACCOUNT": "tender-fees.near", "INVOICE_TTL_SECONDS": "600"}
BUYER = {"origin_asset": "usdc.eth", "refund_to": "0x" + "b" * 40}


def flask(*args: str) -> str:
    done = subprocess.run([str(BIN / "flask"), "--app", "wsgi", *args], cwd=ROOT, env=_env(**FEE), check=True,
                          capture_output=True, text=True)
    return done.stdout


def _store(name: str) -> dict:
    return json.loads(flask("stores", "create", "--name", name, "--payout-wallet", "e2e-merchant.near",
                            "--json").strip().splitlines()[-1])


@pytest.fixture(scope="module")
def stack():
    import redis

    redis.Redis.from_url(REDIS_URL).flushdb()
    flask("db", "upgrade")
    with_fee, without_fee = _store("Fee shop"), _store("Euro shop")
    flask("stores", "set-fee", "--store", without_fee["store_id"], "--bps", "0")
    port = free_port()
    processes = Processes()
    try:
        processes.start("web", [str(BIN / "gunicorn"), "--config", "gunicorn.conf.py", "wsgi:app"],
                        _env(HOST="127.0.0.1", PORT=str(port), WEB_CONCURRENCY="1", WEB_THREADS="4", **FEE))
        processes.start("cron", [str(BIN / "rq"), "cron", "--url", REDIS_URL, "scheduler/cron.py"], _env(**FEE))
        start_worker(processes, **FEE)
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: _answers(url), timeout=30, what="gunicorn to answer /health")
        sessions = {}
        for name, store in (("fee", with_fee), ("euro", without_fee)):
            sessions[name] = checked_session(url)          # every JSON answer is checked against the document
            sessions[name].headers["Authorization"] = f"Bearer {store['api_key']}"
        yield {"url": url, **sessions}
    finally:
        processes.stop_all()


def _answers(url: str) -> bool:
    try:
        return requests.get(f"{url}/health", timeout=1).status_code == 200
    except requests.RequestException:
        return False


def _create(session, url, amount, currency) -> str:
    created = session.post(f"{url}/v1/invoices", json={"amount": amount, "currency": currency}, timeout=5)
    assert created.status_code == 201, created.text
    return created.json()["id"]


def _pay(session, url, invoice_id) -> None:
    paid = session.post(f"{url}/v1/test_helpers/invoices/{invoice_id}/pay", json={}, timeout=5)
    assert paid.status_code == 202, paid.text


def _settled(session, url, invoice_id) -> dict:
    def settled():
        status = session.get(f"{url}/v1/invoices/{invoice_id}/status", timeout=5).json()
        return status if status["received_amount"] is not None else None
    return wait_for(settled, timeout=60, what=f"{invoice_id} to settle")


def _settlement_amount(session, url, invoice_id) -> str:
    listed = session.get(f"{url}/v1/invoices/{invoice_id}/transactions", timeout=5).json()["data"]
    return next(txn["amount"] for txn in listed if txn["type"] == "settlement")


def test_rates_fees_and_refunds_end_to_end(stack):
    url, euro, fee = stack["url"], stack["euro"], stack["fee"]
    flask("rates", "set", "EUR", "1.08")
    eur = _create(euro, url, "100.00", "EUR")
    committed = requests.post(f"{url}/v1/public/invoices/{eur}/quote", json={**BUYER, "dry": False}, timeout=5)
    assert committed.status_code == 200 and committed.json()["quote"]["amount_out"] == "108.00", committed.text
    flask("rates", "set", "EUR", "1.20")                    # between the commit and the payment
    _pay(euro, url, eur)
    jpy = _create(euro, url, "1500", "JPY")
    _pay(euro, url, jpy)                                    # the helper commits at today's yen rate
    usd = _create(fee, url, "100.00", "USD")
    _pay(fee, url, usd)

    status = _settled(euro, url, eur)
    assert (status["exchange_rate"]["rate"], status["payout_amount"], status["received_amount"]) == \
        ("1.080", "108.00", "100.00")
    assert _settlement_amount(euro, url, eur) == "108.00"
    assert _settled(euro, url, jpy)["received_amount"] == "1500"
    usd_status = _settled(fee, url, usd)
    assert (usd_status["received_amount"], usd_status["fee_amount"], usd_status["fee_bps"]) == ("99.00", "1.00", 100)
    assert _settlement_amount(fee, url, usd) == "99.00"

    refund = euro.post(f"{url}/v1/invoices/{eur}/refunds", json={"amount": "25.00"}, timeout=10)
    assert refund.status_code == 201, refund.text
    assert refund.json()["funding"]["amount"] == "27.00"    # 25.00 EUR at the fixed 1.08, not today's 1.20
    funded = euro.post(f"{url}/v1/test_helpers/refunds/{refund.json()['id']}/fund", json={}, timeout=5)
    assert funded.status_code == 202, funded.text
    wait_for(lambda: euro.get(f"{url}/v1/refunds/{refund.json()['id']}", timeout=5).json()["status"] == "succeeded",
             timeout=60, what="the refund to succeed")

    for session in (euro, fee):
        _assert_books_reconcile(session, url)


def _assert_books_reconcile(session, url) -> None:
    """The statement's rows equal the exports summed per day and currency, fees included."""
    today = dt.datetime.now(dt.timezone.utc).date()
    window = {"created_after": f"{today - dt.timedelta(days=1)}T00:00:00Z",
              "created_before": f"{today + dt.timedelta(days=1)}T00:00:00Z"}
    sums = defaultdict(lambda: defaultdict(Decimal))
    transactions = session.get(f"{url}/v1/exports/transactions", params=window, timeout=10)
    for txn in csv.DictReader(io.StringIO(transactions.text)):
        key = (txn["created_at"][:10], txn["invoice_currency"])
        if txn["type"] == "settlement":
            sums[key]["received"] += Decimal(txn["amount"])
        elif txn["type"] == "refund":
            sums[key]["refunded"] += Decimal(txn["refund_amount"] or 0)
    invoices = session.get(f"{url}/v1/exports/invoices", params=window, timeout=10)
    settled_on = {txn_day for txn_day in sums}
    for invoice in csv.DictReader(io.StringIO(invoices.text)):
        if invoice["paid_at"]:
            sums[(invoice["paid_at"][:10], invoice["currency"])]["gross"] += Decimal(invoice["paid_amount"])
        if invoice["fee_amount"]:
            sums[(invoice["paid_at"][:10], invoice["currency"])]["fees"] += Decimal(invoice["fee_amount"])
    statement = session.get(f"{url}/v1/reports/settlements", timeout=10,
                            params={"from": str(today - dt.timedelta(days=1)), "to": str(today)}).json()["data"]
    assert statement and settled_on
    for row in statement:
        expected = sums[(row["date"], row["currency"])]
        assert Decimal(row["received"]) == expected["received"], row
        assert Decimal(row["gross_paid"]) == expected["gross"], row
        assert Decimal(row["fees"]) == expected["fees"], row
        assert Decimal(row["refunded"]) == expected["refunded"], row
