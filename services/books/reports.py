"""The daily settlement statement (docs/exports.md#the-settlement-statement).

One SQL query per request, the same on every database. The sums come from `settlement_day`, the
daily roll-up that services/settlement_days.py (the one definition of what counts on which
day) keeps in the same transaction as the rows: a 90-day statement reads at most 90 rows a currency,
whatever the store's volume. `received` there is the sum of the settlement transactions' amounts,
exactly as the transactions export lists them, so the two reconcile to the last digit. Only
"processing" and "held for review", which change after the fact, are counted live, from the few
invoices in that state.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

from core import money
from infra import database
from models.base import db
from models.invoices import Invoice
from models.settlement_days import SettlementDay
from models.stores import Store

_STATEMENT = """
SELECT day, currency, SUM(paid), {sum}(gross), {sum}(received), {sum}(difference), SUM(refunds),
       SUM(processing), SUM(held), {sum}(refunded), {sum}(fees)
FROM (
    SELECT day, currency, invoices_paid AS paid, gross_paid AS gross, received, difference, refunds,
           0 AS processing, 0 AS held, refunded, fees
    FROM settlement_day
    WHERE store_id = {p} AND day >= {p} AND day < {p} AND movements > 0
    UNION ALL
    SELECT date(paid_at), currency, 0, NULL, NULL, NULL, 0,
           CASE WHEN swap_status = 'processing' THEN 1 ELSE 0 END,
           CASE WHEN review_reason IS NOT NULL THEN 1 ELSE 0 END, NULL, NULL
    FROM invoice
    WHERE store_id = {p} AND paid_at >= {p} AND paid_at < {p}
      AND (swap_status = 'processing' OR review_reason IS NOT NULL)
) AS days
GROUP BY day, currency
ORDER BY day, currency
"""


def statement_sql(database_handle=None) -> str:
    """The statement's query for this connection (its parameter mark and exact sum)."""
    return _STATEMENT.format(sum=database.exact_sum(database_handle), p=(database_handle or db).param)


def statement_params(store_id, since: dt.datetime, until: dt.datetime) -> tuple:
    days = (SettlementDay.day.db_value(since.date()), SettlementDay.day.db_value(until.date()))
    moments = (Invoice.paid_at.db_value(since), Invoice.paid_at.db_value(until))
    return (store_id, *days, store_id, *moments)


def _amount(value) -> Decimal:
    return Decimal(0) if value is None else Decimal(str(value))


def settlement_statement(store: Store, start: dt.date, end: dt.date) -> list[dict]:
    """Per UTC day from `start` to `end` (inclusive) and per invoice currency; days without any
    movement have no row."""
    since = dt.datetime.combine(start, dt.time())
    until = dt.datetime.combine(end + dt.timedelta(days=1), dt.time())
    params = statement_params(Invoice.store.db_value(store.id), since, until)
    return statement_rows(db.execute_sql(statement_sql(), params).fetchall())


def statement_rows(summed) -> list[dict]:
    """The statement's rows from (day, currency, paid, gross, received, difference, refunds,
    processing, held, refunded, fees) tuples, as the API returns them."""
    rows = []
    for day, currency, paid, gross, received, difference, refunds, processing, held, refunded, fees in summed:
        rows.append({
            "date": day if isinstance(day, str) else day.isoformat(),
            "currency": currency,
            "invoices_paid": int(paid),
            "gross_paid": money.format_fiat(_amount(gross), currency),
            "received": money.format_crypto(_amount(received)),
            "difference": money.format_fiat(_amount(difference), currency),
            "refunds": int(refunds),
            "refunded": money.format_fiat(_amount(refunded), currency),
            "processing": int(processing),
            "held_for_review": int(held),
            "fees": money.format_fiat(_amount(fees), currency),
        })
    return rows
