"""The daily settlement statement (docs/exports.md#the-settlement-statement): one query, and figures
that reconcile exactly with the exports."""
import csv
import datetime as dt
from collections import defaultdict
from decimal import Decimal
import io

from playhouse.test_utils import count_queries

from tests import factories
from tests.blueprints.assertions import assert_error

MARCH_10 = dt.datetime(2026, 3, 10, 9, 0)
MARCH_11 = dt.datetime(2026, 3, 11, 23, 59, 59)


def paid_invoice(store, paid_at, amount, *, currency="USD", settle=None, status="paid", **over):
    invoice = factories.make_invoice(store, now=paid_at - dt.timedelta(minutes=5), status=status, currency=currency,
                                     amount=Decimal(amount), paid_amount=Decimal(amount), paid_at=paid_at, **over)
    if settle is not None:
        factories.make_transaction(invoice, now=paid_at + dt.timedelta(minutes=1), type="settlement",
                                   token="usdc.near", amount=Decimal(settle))
    return invoice


def statement(client, auth, start="2026-03-10", end="2026-03-11"):
    response = client.get("/v1/reports/settlements", headers=auth, query_string={"from": start, "to": end})
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def seed(store):
    refunded_in_part = paid_invoice(store, MARCH_10, "25.00", settle="24.87", difference_amount=Decimal("-0.13"))
    merchant_refund = factories.make_refund(refunded_in_part, now=MARCH_11, status="succeeded",
                                            amount=Decimal("5.00"))
    factories.make_transaction(refunded_in_part, now=MARCH_11, type="refund", token="usdc.eth",
                               amount=Decimal("4.975"), refund=merchant_refund.id)
    paid_invoice(store, MARCH_10, "10.00", settle="10.000001", difference_amount=Decimal("0.00"))
    paid_invoice(store, MARCH_10, "5.00", swap_status="processing")
    paid_invoice(store, MARCH_10, "7.00", swap_status="processing", review_reason="short_delivery")
    paid_invoice(store, MARCH_10, "8.00", currency="EUR", settle="8.00", difference_amount=Decimal("0.00"))
    refunded = paid_invoice(store, MARCH_11, "3.00", status="refunded")
    factories.make_transaction(refunded, now=MARCH_11, type="refund", token="usdc.eth", amount=Decimal("2.9"))
    paid_invoice(store, dt.datetime(2026, 3, 12, 0, 0), "99.00", settle="99.00")         # after `to`


def test_per_day_and_currency(client, auth, store):
    seed(store)
    body = statement(client, auth)
    assert (body["from"], body["to"]) == ("2026-03-10", "2026-03-11")
    assert body["data"] == [
        {"date": "2026-03-10", "currency": "EUR", "invoices_paid": 1, "gross_paid": "8.00", "received": "8.00",
         "difference": "0.00", "refunds": 0, "refunded": "0.00", "processing": 0, "held_for_review": 0},
        {"date": "2026-03-10", "currency": "USD", "invoices_paid": 4, "gross_paid": "47.00",
         "received": "34.870001", "difference": "-0.13", "refunds": 0, "refunded": "0.00", "processing": 2,
         "held_for_review": 1},
        {"date": "2026-03-11", "currency": "USD", "invoices_paid": 1, "gross_paid": "3.00", "received": "0.00",
         "difference": "0.00", "refunds": 2, "refunded": "5.00", "processing": 0, "held_for_review": 0},
    ]


def test_reconciles_with_the_exports(client, auth, store):
    seed(store)
    rows = {(row["date"], row["currency"]): row for row in statement(client, auth)["data"]}
    export_range = {"created_after": "2026-03-01T00:00:00Z", "created_before": "2026-04-01T00:00:00Z"}
    received, gross, refunds = defaultdict(Decimal), defaultdict(Decimal), defaultdict(int)
    refunded = defaultdict(Decimal)
    transactions = client.get("/v1/exports/transactions", headers=auth, query_string=export_range)
    for txn in csv.DictReader(io.StringIO(transactions.get_data(as_text=True))):
        day = (txn["created_at"][:10], txn["invoice_currency"])
        if txn["type"] == "settlement":
            received[day] += Decimal(txn["amount"])
        elif txn["type"] == "refund":
            refunds[day] += 1
            refunded[day] += Decimal(txn["refund_amount"] or 0)
    invoices = client.get("/v1/exports/invoices", headers=auth, query_string=export_range)
    for invoice in csv.DictReader(io.StringIO(invoices.get_data(as_text=True))):
        if invoice["paid_at"]:
            gross[(invoice["paid_at"][:10], invoice["currency"])] += Decimal(invoice["paid_amount"])
    for key, row in rows.items():
        assert Decimal(row["received"]) == received[key]
        assert Decimal(row["gross_paid"]) == gross[key]
        assert row["refunds"] == refunds[key]
        assert Decimal(row["refunded"]) == refunded[key]


def test_one_query_and_store_isolation(client, auth, other_auth, store):
    seed(store)
    statement(client, auth)                         # warm: key lookups cached per test alike
    with count_queries() as counter:
        statement(client, auth)
    statement_queries = [q for q in counter.get_queries() if "UNION ALL" in q.msg[0]]
    assert len(statement_queries) == 1
    assert statement(client, other_auth)["data"] == []


def test_bad_ranges(client, auth):
    for query, param in (({"from": "2026-03-10"}, "to"), ({"to": "2026-03-10"}, "from"),
                         ({"from": "2026-03-10", "to": "2026-03-09"}, "to"),
                         ({"from": "2026-01-01", "to": "2027-01-02"}, "to"),
                         ({"from": "10/03/2026", "to": "2026-03-10"}, "from"),
                         ({"from": "2026-03-10", "to": "2026-03-10", "currency": "USD"}, "currency")):
        response = client.get("/v1/reports/settlements", headers=auth, query_string=query)
        assert_error(response, 400, "validation_error", param=param)
    statement(client, auth, "2026-01-01", "2027-01-01")      # 366 days: allowed


def test_the_last_representable_day_is_refused_naming_the_parameter(client, auth):
    """The statement runs to the midnight after `to`, which 9999-12-31 does not have."""
    response = client.get("/v1/reports/settlements", headers=auth,
                          query_string={"from": "9999-12-30", "to": "9999-12-31"})
    assert_error(response, 400, "validation_error", param="to")
    statement(client, auth, "9999-12-29", "9999-12-30")      # the day before it still answers


def test_the_daily_roll_up_matches_the_rows_through_later_changes(app, store):
    """PostgreSQL reads the statement from `settlement_day`, kept by triggers; after every kind of
    later change (a top-up, a settlement whose difference is written after its transaction, a
    refund, a hold, a paid day moved) it must equal the sum of the rows themselves."""
    import random

    import pytest

    from models.base import db, is_postgres
    from models.invoices import Invoice
    from services.books import reports
    if not is_postgres():
        pytest.skip("the roll-up is PostgreSQL's (TEST_DATABASE_URL)")
    seed(store)
    chance = random.Random(7)
    for index in range(40):
        paid_at = MARCH_10 + dt.timedelta(hours=chance.randrange(0, 40))
        invoice = paid_invoice(store, paid_at, f"{chance.randrange(1, 500)}.{chance.randrange(0, 100):02d}",
                               currency=chance.choice(["USD", "EUR"]))
        with db.connection_context():
            move = index % 5
            if move == 0:           # a top-up raises what was paid
                Invoice.update(paid_amount=invoice.paid_amount + Decimal("1.25")).where(Invoice.id == invoice.id).execute()
            elif move == 1:         # the settlement transaction first, its difference written next
                factories.make_transaction(invoice, now=paid_at + dt.timedelta(minutes=3), type="settlement",
                                           token="usdc.near", amount=invoice.paid_amount - Decimal("0.07"))
                Invoice.update(difference_amount=Decimal("-0.07"), received_amount=invoice.paid_amount - Decimal("0.07")
                               ).where(Invoice.id == invoice.id).execute()
            elif move == 2:         # a provider refund, or a merchant refund's delivery (its amount counts)
                merchant = factories.make_refund(invoice, status="succeeded") if index % 2 else None
                factories.make_transaction(invoice, now=paid_at + dt.timedelta(hours=30), type="refund",
                                           token="usdc.eth", amount=Decimal("1.5"),
                                           refund=merchant.id if merchant else None)
            elif move == 3:
                Invoice.update(review_reason="short_delivery", swap_status="processing").where(
                    Invoice.id == invoice.id).execute()
            else:                   # a paid moment corrected across midnight
                Invoice.update(paid_at=paid_at + dt.timedelta(days=1)).where(Invoice.id == invoice.id).execute()
    with db.connection_context():
        for start, end in ((dt.date(2026, 3, 1), dt.date(2026, 3, 31)), (dt.date(2026, 3, 11), dt.date(2026, 3, 11))):
            rolled_up = reports.settlement_statement(store, start, end, rolled_up=True)
            summed = reports.settlement_statement(store, start, end, rolled_up=False)
            assert rolled_up == summed
        assert len(rolled_up) >= 1 and sum(row["invoices_paid"] for row in summed) > 0
