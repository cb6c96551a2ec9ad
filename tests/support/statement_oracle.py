"""The settlement statement summed straight from the rows: the oracle the daily roll-up is checked
against (services/settlement_days.py keeps the roll-up; services/books/reports.py reads it).

The same definition written as one query over invoices and transactions, independent of the
roll-up's code, so a write point that forgets the roll-up shows as a difference here."""
from __future__ import annotations

import datetime as dt

from infra import database
from models.base import db
from models.invoices import Invoice
from services.books import reports

_ROWS = """
SELECT day, currency, SUM(paid), {sum}(gross), {sum}(received), {sum}(difference), SUM(refunds),
       SUM(processing), SUM(held), {sum}(refunded), {sum}(fees)
FROM (
    SELECT date(paid_at) AS day, currency, 1 AS paid, paid_amount AS gross, NULL AS received,
           NULL AS difference, 0 AS refunds,
           CASE WHEN swap_status = 'processing' THEN 1 ELSE 0 END AS processing,
           CASE WHEN review_reason IS NOT NULL THEN 1 ELSE 0 END AS held, NULL AS refunded, NULL AS fees
    FROM invoice
    WHERE store_id = {p} AND paid_at >= {p} AND paid_at < {p}
    UNION ALL
    SELECT date(t.created_at), i.currency, 0, NULL,
           CASE WHEN t.type = 'settlement' THEN t.amount END,
           CASE WHEN t.type = 'settlement' THEN i.difference_amount END,
           CASE WHEN t.type = 'refund' THEN 1 ELSE 0 END, 0, 0, r.amount,
           CASE WHEN t.type = 'settlement' THEN i.fee_amount END
    FROM "transaction" t JOIN invoice i ON i.id = t.invoice_id LEFT JOIN refund r ON r.id = t.refund_id
    WHERE t.store_id = {p} AND t.type IN ('settlement', 'refund') AND t.created_at >= {p} AND t.created_at < {p}
) AS movements
GROUP BY day, currency
ORDER BY day, currency
"""

EVER = (dt.date(2000, 1, 1), dt.date(2099, 12, 31))


def summed_statement(store_id, start: dt.date, end: dt.date) -> list[dict]:
    """The statement's rows, as the API returns them, summed from the rows themselves."""
    since = dt.datetime.combine(start, dt.time())
    until = dt.datetime.combine(end + dt.timedelta(days=1), dt.time())
    bounds = (Invoice.paid_at.db_value(since), Invoice.paid_at.db_value(until))
    store = Invoice.store.db_value(store_id)
    sql = _ROWS.format(sum=database.exact_sum(), p=db.param)
    return reports.statement_rows(db.execute_sql(sql, (store, *bounds, store, *bounds)).fetchall())


def assert_roll_up_matches_rows(store_id, start: dt.date = EVER[0], end: dt.date = EVER[1]) -> list[dict]:
    """The statement from the roll-up equals the rows summed, from `start` to `end`; returns it."""
    from models.stores import Store

    rolled_up = reports.settlement_statement(Store(id=store_id), start, end)
    assert rolled_up == summed_statement(store_id, start, end)
    return rolled_up


def assert_every_store_matches() -> None:
    """`assert_roll_up_matches_rows` for every store there is."""
    from models.stores import Store

    with db.connection_context():
        for store_id in Store.select(Store.id).tuples():
            assert_roll_up_matches_rows(store_id[0])


def roll_up_checked_after_each_test():
    """A module's autouse fixture: after each of its tests, the roll-up equals the rows summed."""
    yield
    assert_every_store_matches()
