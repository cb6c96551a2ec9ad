"""The settlement statement's daily roll-up on both databases, kept by the application.

From here on `settlement_day` is kept by services/settlement_days.py, called in the
transaction of every write that changes what it sums, the same on PostgreSQL and SQLite.

PostgreSQL had the table since 0008, kept by triggers (amended in 0012): the triggers and their
functions go, the rows stay as they left them (the module's rules are theirs).

SQLite gets the table (amounts as text, as everywhere on SQLite: models/fields.py), summed from the
existing rows by the module's `rebuild`, and the partial index the live "processing" and "held for
review" counts read, which PostgreSQL has had since 0008.
"""
import datetime as dt

import peewee as pw

DROPPED = [
    "DROP TRIGGER IF EXISTS settlement_day_invoice_insert ON invoice",
    "DROP TRIGGER IF EXISTS settlement_day_invoice_update ON invoice",
    'DROP TRIGGER IF EXISTS settlement_day_transaction_insert ON "transaction"',
    "DROP FUNCTION IF EXISTS settlement_day_invoice()",
    "DROP FUNCTION IF EXISTS settlement_day_transaction()",
    "DROP FUNCTION IF EXISTS settlement_day_add(uuid, date, varchar, integer, numeric, numeric, numeric, integer, "
    "integer)",
]


def up(migrator, db):
    if isinstance(db, pw.PostgresqlDatabase):
        for statement in DROPPED:
            db.execute_sql(statement)
        return

    # Text, not a NUMERIC (or DATE, UUID) affinity that would turn an amount into float.
    db.execute_sql("""
        CREATE TABLE settlement_day (
            store_id TEXT NOT NULL REFERENCES store (id) ON DELETE CASCADE,
            day TEXT NOT NULL,
            currency VARCHAR(3) NOT NULL,
            invoices_paid INTEGER NOT NULL DEFAULT 0,
            gross_paid TEXT NOT NULL DEFAULT '0',
            received TEXT NOT NULL DEFAULT '0',
            difference TEXT NOT NULL DEFAULT '0',
            refunds INTEGER NOT NULL DEFAULT 0,
            refunded TEXT NOT NULL DEFAULT '0',
            movements INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (store_id, day, currency)
        )""")
    db.execute_sql("CREATE INDEX invoice_paid_unfinished ON invoice (store_id, paid_at) "
                   "WHERE swap_status = 'processing' OR review_reason IS NOT NULL")
    first, last = db.execute_sql(
        'SELECT MIN(d), MAX(d) FROM (SELECT date(paid_at) AS d FROM invoice WHERE paid_at IS NOT NULL '
        "UNION ALL SELECT date(created_at) FROM \"transaction\" WHERE type IN ('settlement', 'refund')) AS days"
    ).fetchone()
    if first is not None:
        # Summed by the one definition of what counts on which day, not a copy of it.
        from services import settlement_days

        settlement_days.rebuild(dt.date.fromisoformat(first), dt.date.fromisoformat(last), handle=db,
                                with_fees=False)      # fees come with migration 0019
