"""The settlement statement's daily roll-up, on PostgreSQL.

`settlement_day` holds, per store, UTC day and invoice currency, the sums the statement reports:
invoices paid and their gross (by `paid_at`), settlement amounts received with their invoices'
difference, and refunds (by the transaction's `created_at`). Triggers keep it in the same
transaction as the rows it sums, whichever code writes them, so a statement reads at most one row
per day and currency instead of every invoice of the range (docs/exports.md). The rows it starts
with are summed from the existing invoices and transactions.

SQLite (the embedded default) has no roll-up: its statement sums the rows themselves.
"""
import peewee as pw


def up(migrator, db):
    if not isinstance(db, pw.PostgresqlDatabase):
        return
    for statement in STATEMENTS:
        db.execute_sql(statement)


STATEMENTS = [
    """
    CREATE TABLE settlement_day (
        store_id uuid NOT NULL REFERENCES store (id) ON DELETE CASCADE,
        day date NOT NULL,
        currency varchar(3) NOT NULL,
        invoices_paid integer NOT NULL DEFAULT 0,
        gross_paid numeric NOT NULL DEFAULT 0,
        received numeric NOT NULL DEFAULT 0,
        difference numeric NOT NULL DEFAULT 0,
        refunds integer NOT NULL DEFAULT 0,
        movements integer NOT NULL DEFAULT 0,     -- rows summed here: the day has a statement row while > 0
        PRIMARY KEY (store_id, day, currency)
    )
    """,
    # One day row grows by the given amounts (negative to take a contribution back).
    """
    CREATE FUNCTION settlement_day_add(p_store uuid, p_day date, p_currency varchar, p_paid integer,
                                       p_gross numeric, p_received numeric, p_difference numeric,
                                       p_refunds integer, p_movements integer) RETURNS void LANGUAGE sql AS $$
        INSERT INTO settlement_day AS s (store_id, day, currency, invoices_paid, gross_paid, received,
                                         difference, refunds, movements)
        VALUES (p_store, p_day, p_currency, p_paid, COALESCE(p_gross, 0), COALESCE(p_received, 0),
                COALESCE(p_difference, 0), p_refunds, p_movements)
        ON CONFLICT (store_id, day, currency) DO UPDATE SET
            invoices_paid = s.invoices_paid + EXCLUDED.invoices_paid,
            gross_paid = s.gross_paid + EXCLUDED.gross_paid,
            received = s.received + EXCLUDED.received,
            difference = s.difference + EXCLUDED.difference,
            refunds = s.refunds + EXCLUDED.refunds,
            movements = s.movements + EXCLUDED.movements
    $$
    """,
    # An invoice counts on its paid day with its paid amount; a settled invoice's difference counts
    # on the day of each of its settlement transactions (as the statement joins them).
    """
    CREATE FUNCTION settlement_day_invoice() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        settled record;
    BEGIN
        IF TG_OP = 'UPDATE' AND OLD.paid_at IS NOT NULL THEN
            PERFORM settlement_day_add(OLD.store_id, date(OLD.paid_at), OLD.currency, -1, -OLD.paid_amount,
                                       0, 0, 0, -1);
        END IF;
        IF NEW.paid_at IS NOT NULL THEN
            PERFORM settlement_day_add(NEW.store_id, date(NEW.paid_at), NEW.currency, 1, NEW.paid_amount, 0, 0, 0, 1);
        END IF;
        IF TG_OP = 'UPDATE' AND NEW.difference_amount IS DISTINCT FROM OLD.difference_amount THEN
            FOR settled IN SELECT created_at FROM "transaction" WHERE invoice_id = NEW.id AND type = 'settlement'
            LOOP
                PERFORM settlement_day_add(NEW.store_id, date(settled.created_at), NEW.currency, 0, 0, 0,
                                           COALESCE(NEW.difference_amount, 0) - COALESCE(OLD.difference_amount, 0), 0, 0);
            END LOOP;
        END IF;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER settlement_day_invoice_insert AFTER INSERT ON invoice
        FOR EACH ROW WHEN (NEW.paid_at IS NOT NULL) EXECUTE FUNCTION settlement_day_invoice()
    """,
    """
    CREATE TRIGGER settlement_day_invoice_update AFTER UPDATE OF paid_at, paid_amount, difference_amount ON invoice
        FOR EACH ROW WHEN (OLD.paid_at IS DISTINCT FROM NEW.paid_at OR OLD.paid_amount IS DISTINCT FROM NEW.paid_amount
                           OR OLD.difference_amount IS DISTINCT FROM NEW.difference_amount)
        EXECUTE FUNCTION settlement_day_invoice()
    """,
    # A settlement adds what it delivered and its invoice's difference; a refund counts once.
    """
    CREATE FUNCTION settlement_day_transaction() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        paid record;
    BEGIN
        SELECT currency, difference_amount INTO paid FROM invoice WHERE id = NEW.invoice_id;
        IF NEW.type = 'settlement' THEN
            PERFORM settlement_day_add(NEW.store_id, date(NEW.created_at), paid.currency, 0, 0, NEW.amount,
                                       paid.difference_amount, 0, 1);
        ELSE
            PERFORM settlement_day_add(NEW.store_id, date(NEW.created_at), paid.currency, 0, 0, 0, 0, 1, 1);
        END IF;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER settlement_day_transaction_insert AFTER INSERT ON "transaction"
        FOR EACH ROW WHEN (NEW.type IN ('settlement', 'refund')) EXECUTE FUNCTION settlement_day_transaction()
    """,
    """
    INSERT INTO settlement_day (store_id, day, currency, invoices_paid, gross_paid, received, difference, refunds,
                                movements)
    SELECT store_id, day, currency, SUM(paid), COALESCE(SUM(gross), 0), COALESCE(SUM(received), 0),
           COALESCE(SUM(difference), 0), SUM(refunds), COUNT(*)
    FROM (
        SELECT store_id, date(paid_at) AS day, currency, 1 AS paid, paid_amount AS gross,
               NULL::numeric AS received, NULL::numeric AS difference, 0 AS refunds
        FROM invoice WHERE paid_at IS NOT NULL
        UNION ALL
        SELECT t.store_id, date(t.created_at), i.currency, 0, NULL,
               CASE WHEN t.type = 'settlement' THEN t.amount END,
               CASE WHEN t.type = 'settlement' THEN i.difference_amount END,
               CASE WHEN t.type = 'refund' THEN 1 ELSE 0 END
        FROM "transaction" t JOIN invoice i ON i.id = t.invoice_id
        WHERE t.type IN ('settlement', 'refund')
    ) AS movements
    GROUP BY store_id, day, currency
    """,
    # The statement's "processing" and "held for review" are counted live: few invoices at a time.
    """
    CREATE INDEX invoice_paid_unfinished ON invoice (store_id, paid_at)
        WHERE swap_status = 'processing' OR review_reason IS NOT NULL
    """,
]
