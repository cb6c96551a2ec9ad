"""The daily settlement statement (docs/exports.md#the-settlement-statement).

One SQL query per request: invoices paid (by `paid_at`), settlement and refund transactions (by
their `created_at`, a merchant refund's delivery with the refund's amount) are folded into one row
per UTC day and invoice currency. `received` is the
sum of the settlement transactions' amounts, exactly as the transactions export lists them, so
the two reconcile to the last digit.

On PostgreSQL the sums come from `settlement_day`, the daily roll-up that triggers keep in the
same transaction as the rows (migrations/0008_settlement_days.py): a 90-day statement reads at most
90 rows a currency, whatever the store's volume. Only "processing" and "held for review", which
change after the fact, are counted live. SQLite sums the rows themselves (`_ROWS`), and the tests
compare both on PostgreSQL.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

from core import money
from infra import database
from models.base import db
from models.invoices import Invoice
from models.stores import Store

_ROWS = """
SELECT day, currency, SUM(paid), {sum}(gross), {sum}(received), {sum}(difference), SUM(refunds),
       SUM(processing), SUM(held), {sum}(refunded)
FROM (
    SELECT date(paid_at) AS day, currency, 1 AS paid, paid_amount AS gross, NULL AS received,
           NULL AS difference, 0 AS refunds,
           CASE WHEN swap_status = 'processing' THEN 1 ELSE 0 END AS processing,
           CASE WHEN review_reason IS NOT NULL THEN 1 ELSE 0 END AS held, NULL AS refunded
    FROM invoice
    WHERE store_id = {p} AND paid_at >= {p} AND paid_at < {p}
    UNION ALL
    -- A refund transaction's own amount is in the buyer's asset: a merchant refund's delivery
    -- counts in `refunded` with the refund's amount, in the invoice currency.
    SELECT date(t.created_at), i.currency, 0, NULL,
           CASE WHEN t.type = 'settlement' THEN t.amount END,
           CASE WHEN t.type = 'settlement' THEN i.difference_amount END,
           CASE WHEN t.type = 'refund' THEN 1 ELSE 0 END, 0, 0, r.amount
    FROM "transaction" t JOIN invoice i ON i.id = t.invoice_id LEFT JOIN refund r ON r.id = t.refund_id
    WHERE t.store_id = {p} AND t.type IN ('settlement', 'refund') AND t.created_at >= {p} AND t.created_at < {p}
) AS movements
GROUP BY day, currency
ORDER BY day, currency
"""


_ROLLED_UP = """
SELECT day, currency, SUM(paid), SUM(gross), SUM(received), SUM(difference), SUM(refunds),
       SUM(processing), SUM(held), SUM(refunded)
FROM (
    SELECT day, currency, invoices_paid AS paid, gross_paid AS gross, received, difference, refunds,
           0 AS processing, 0 AS held, refunded
    FROM settlement_day
    WHERE store_id = %s AND day >= %s AND day < %s AND movements > 0
    UNION ALL
    SELECT date(paid_at), currency, 0, 0, 0, 0, 0,
           CASE WHEN swap_status = 'processing' THEN 1 ELSE 0 END,
           CASE WHEN review_reason IS NOT NULL THEN 1 ELSE 0 END, 0
    FROM invoice
    WHERE store_id = %s AND paid_at >= %s AND paid_at < %s
      AND (swap_status = 'processing' OR review_reason IS NOT NULL)
) AS days
GROUP BY day, currency
ORDER BY day, currency
"""


def _summed_rows(store_id, since: dt.datetime, until: dt.datetime, *, rolled_up: bool):
    """(day, currency, paid, gross, received, difference, refunds, processing, held, refunded) rows."""
    bounds = (Invoice.paid_at.db_value(since), Invoice.paid_at.db_value(until))
    if rolled_up:
        days = (since.date(), until.date())
        return db.execute_sql(_ROLLED_UP, (store_id, *days, store_id, *bounds)).fetchall()
    sql = _ROWS.format(sum=database.exact_sum(), p=db.param)
    return db.execute_sql(sql, (store_id, *bounds, store_id, *bounds)).fetchall()


def _amount(value) -> Decimal:
    return Decimal(0) if value is None else Decimal(str(value))


def settlement_statement(store: Store, start: dt.date, end: dt.date, *, rolled_up: bool | None = None) -> list[dict]:
    """Per UTC day from `start` to `end` (inclusive) and per invoice currency; days without any
    movement have no row. `rolled_up`: read the daily roll-up (the default where the database keeps
    one, infra/database.py) or sum the rows."""
    since = dt.datetime.combine(start, dt.time())
    until = dt.datetime.combine(end + dt.timedelta(days=1), dt.time())
    store_id = Invoice.store.db_value(store.id)
    if rolled_up is None:
        rolled_up = database.keeps_settlement_days()
    summed = _summed_rows(store_id, since, until, rolled_up=rolled_up)
    rows = []
    for day, currency, paid, gross, received, difference, refunds, processing, held, refunded in summed:
        rows.append({
            "date": day if isinstance(day, str) else day.isoformat(),
            "currency": currency,
            "invoices_paid": int(paid),
            "gross_paid": money.format_fiat(_amount(gross)),
            "received": money.format_crypto(_amount(received)),
            "difference": money.format_fiat(_amount(difference)),
            "refunds": int(refunds),
            "refunded": money.format_fiat(_amount(refunded)),
            "processing": int(processing),
            "held_for_review": int(held),
        })
    return rows
