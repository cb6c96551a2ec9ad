"""The daily settlement statement (docs/exports.md#the-settlement-statement): one query, and figures
that reconcile exactly with the exports."""
import csv
import datetime as dt
from collections import defaultdict
from decimal import Decimal
import io
import random

import pytest
from playhouse.test_utils import count_queries

from infra import locks
from models.base import db
from models.invoices import Invoice
from models.settlement_days import SettlementDay
from services import settlement_days
from services.engine import invoice_states
from tests import factories
from tests.blueprints.assertions import assert_error
from tests.support.statement_oracle import assert_roll_up_matches_rows

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
    with db.connection_context():
        assert body["data"] == assert_roll_up_matches_rows(store.id, dt.date(2026, 3, 10), dt.date(2026, 3, 11))
    assert (body["from"], body["to"]) == ("2026-03-10", "2026-03-11")
    assert body["data"] == [
        {"date": "2026-03-10", "currency": "EUR", "invoices_paid": 1, "gross_paid": "8.00", "received": "8.00",
         "difference": "0.00", "refunds": 0, "refunded": "0.00", "processing": 0, "held_for_review": 0,
         "fees": "0.00"},
        {"date": "2026-03-10", "currency": "USD", "invoices_paid": 4, "gross_paid": "47.00",
         "received": "34.870001", "difference": "-0.13", "refunds": 0, "refunded": "0.00", "processing": 2,
         "held_for_review": 1, "fees": "0.00"},
        {"date": "2026-03-11", "currency": "USD", "invoices_paid": 1, "gross_paid": "3.00", "received": "0.00",
         "difference": "0.00", "refunds": 2, "refunded": "5.00", "processing": 0, "held_for_review": 0,
         "fees": "0.00"},
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


def _answer(invoice_id, now, **changes):
    """One write of the invoice as the engine makes it (invoice_states.Answer), which keeps the roll-up."""
    with locks.write_transaction():
        answer = invoice_states.Answer(Invoice.get_by_id(invoice_id), now=now)
        reason = changes.pop("hold", None)
        answer.set(**changes)
        if reason:
            answer.hold(reason)
        return answer.write()


def test_the_daily_roll_up_matches_the_rows_through_later_changes(app, store):
    """The statement reads `settlement_day`, kept at every write point; after every kind of later
    change (a top-up, a settlement whose difference is written after its transaction, a refund, a
    hold, a paid day moved) it must equal the sum of the rows themselves, on either database."""
    seed(store)
    chance = random.Random(7)
    for index in range(40):
        paid_at = MARCH_10 + dt.timedelta(hours=chance.randrange(0, 40))
        invoice = paid_invoice(store, paid_at, f"{chance.randrange(1, 500)}.{chance.randrange(0, 100):02d}",
                               currency=chance.choice(["USD", "EUR"]))
        later = paid_at + dt.timedelta(hours=1)
        with db.connection_context():
            move = index % 5
            if move == 0:           # a top-up raises what was paid
                _answer(invoice.id, later, paid_amount=invoice.paid_amount + Decimal("1.25"))
            elif move == 1:         # the settlement transaction first, its difference written next
                factories.make_transaction(invoice, now=paid_at + dt.timedelta(minutes=3), type="settlement",
                                           token="usdc.near", amount=invoice.paid_amount - Decimal("0.07"))
                _answer(invoice.id, later, difference_amount=Decimal("-0.07"),
                        received_amount=invoice.paid_amount - Decimal("0.07"))
                if index % 2:       # and corrected once more
                    _answer(invoice.id, later, difference_amount=Decimal("-0.08"))
            elif move == 2:         # a provider refund, or a merchant refund's delivery (its amount counts)
                merchant = factories.make_refund(invoice, status="succeeded") if index % 2 else None
                factories.make_transaction(invoice, now=paid_at + dt.timedelta(hours=30), type="refund",
                                           token="usdc.eth", amount=Decimal("1.5"),
                                           refund=merchant.id if merchant else None)
            elif move == 3:
                _answer(invoice.id, later, swap_status="processing", hold="short_delivery")
            else:                   # a paid moment corrected across midnight
                _answer(invoice.id, later, paid_at=paid_at + dt.timedelta(days=1))
    with db.connection_context():
        for start, end in ((dt.date(2026, 3, 1), dt.date(2026, 3, 31)), (dt.date(2026, 3, 11), dt.date(2026, 3, 11))):
            rolled_up = assert_roll_up_matches_rows(store.id, start, end)
        assert len(rolled_up) >= 1 and sum(row["invoices_paid"] for row in rolled_up) > 0
        assert_roll_up_matches_rows(store.id)


def test_a_stale_answer_never_moves_the_roll_up_twice(app, store):
    """Two answers read the same invoice and both change its paid amount: the second finds the
    amount changed since its read and writes nothing (it is applied again to the invoice as it is
    now), so the roll-up takes back what is really there, once."""
    invoice = paid_invoice(store, MARCH_10, "10.00")
    with db.connection_context():
        first, second = (invoice_states.Answer(Invoice.get_by_id(invoice.id), now=MARCH_11) for _ in range(2))
        first.set(paid_amount=Decimal("12.00"))
        second.set(paid_amount=Decimal("11.00"))
        with locks.write_transaction():
            first.write()
        with pytest.raises(invoice_states.Outdated), locks.write_transaction():
            second.write()
        [day] = assert_roll_up_matches_rows(store.id)
        assert (day["invoices_paid"], day["gross_paid"]) == (1, "12.00")


def test_a_plain_move_keeps_the_roll_up_too(app, store):
    """`invoice_states.move` given paid or settled amounts reads the row it replaces under its lock
    and moves the roll-up from it."""
    invoice = paid_invoice(store, MARCH_10, "10.00", status="expired")
    with db.connection_context():
        invoice_states.move(invoice.id, "deposit_confirmed", now=MARCH_11, paid_at=MARCH_11,
                            paid_amount=Decimal("10.50"))
        assert [(row["date"], row["gross_paid"]) for row in assert_roll_up_matches_rows(store.id)] == [
            ("2026-03-11", "10.50")]


def test_rebuilding_days_gives_back_what_the_write_points_kept(app, store, other_store):
    """`rebuild` sums days again from the rows by the same rules: the days come back as they were,
    for rows loaded around the write points too (here: one store's day rows lost)."""
    seed(store)
    paid_invoice(other_store, MARCH_10, "4.00", settle="4.00", difference_amount=Decimal("0.00"))
    with db.connection_context():
        kept = {key: assert_roll_up_matches_rows(key) for key in (store.id, other_store.id)}
        SettlementDay.delete().where(SettlementDay.store == store.id).execute()
        settlement_days.rebuild(dt.date(2026, 3, 10), dt.date(2026, 3, 12), store_id=store.id)
        assert {key: assert_roll_up_matches_rows(key) for key in kept} == kept
        settlement_days.rebuild(dt.date(2026, 3, 1), dt.date(2026, 3, 31))
        assert {key: assert_roll_up_matches_rows(key) for key in kept} == kept


def test_the_roll_up_keeps_amounts_to_the_last_digit(app, store):
    """Amounts as wide as the columns hold (18 digits each side) are added and taken back exactly,
    never through float nor Decimal's default 28 digits, on either database."""
    wide = Decimal("123456789012345678.000000000000000001")
    invoice = paid_invoice(store, MARCH_10, "1.00")
    with db.connection_context():
        _answer(invoice.id, MARCH_11, paid_amount=wide)
        factories.make_transaction(invoice, now=MARCH_11, type="settlement", token="usdc.near", amount=wide)
        _answer(invoice.id, MARCH_11, difference_amount=-wide)
        paid_day, settled_day = SettlementDay.select().order_by(SettlementDay.day)
        assert (paid_day.gross_paid, settled_day.received, settled_day.difference) == (wide, wide, -wide)
        assert_roll_up_matches_rows(store.id)
