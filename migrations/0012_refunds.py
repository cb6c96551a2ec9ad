"""Merchant refunds (issue 28): the `refund` table, what an invoice has refunded, the link from a
transaction to the refund it belongs to, and the settlement statement's refunded sum.

Frozen copies, as in 0001. Indexes: the refund poller reads only rows with a `next_poll_at`
(partial index, as small as the open work); the expiry sweep reads (status, expires_at); lists
read (store, created_at) and an invoice's refunds.
"""
import peewee as pw

from models.fields import AmountField


def up(migrator, db):
    class Base(pw.Model):
        class Meta:
            database = db
            legacy_table_names = False

    class Store(Base):
        id = pw.UUIDField(primary_key=True)

    class Invoice(Base):
        id = pw.UUIDField(primary_key=True)

    class Refund(Base):
        id = pw.UUIDField(primary_key=True)
        public_id = pw.CharField(max_length=40, unique=True)
        store = pw.ForeignKeyField(Store, on_delete="CASCADE", index=False)
        invoice = pw.ForeignKeyField(Invoice, on_delete="CASCADE")
        status = pw.CharField(max_length=20)
        amount = AmountField()
        currency = pw.CharField(max_length=3)
        reason = pw.CharField(max_length=500, null=True)
        asset = pw.CharField(max_length=64)
        refund_to = pw.CharField(max_length=256)
        estimated_amount_out = AmountField()
        delivered_amount = AmountField(null=True)
        transaction_hash = pw.CharField(max_length=256, null=True)
        funding_asset = pw.CharField(max_length=64)
        funding_amount = AmountField()
        deposit_address = pw.CharField(max_length=256)
        deposit_memo = pw.CharField(max_length=256, null=True)
        expires_at = pw.DateTimeField()
        funded_amount = AmountField(null=True)
        funding_tx_hash = pw.CharField(max_length=256, null=True)
        returned_amount = AmountField(null=True)
        return_tx_hash = pw.CharField(max_length=256, null=True)
        failure_reason = pw.CharField(max_length=32, null=True)
        provider_ref = pw.CharField(max_length=128, null=True)
        origin_decimals = pw.SmallIntegerField(null=True)
        destination_decimals = pw.SmallIntegerField(null=True)
        provider_status = pw.CharField(max_length=32, null=True)
        quoted_at = pw.DateTimeField()
        deposit_seen_at = pw.DateTimeField(null=True)
        next_poll_at = pw.DateTimeField(null=True)
        claimed_until = pw.DateTimeField(null=True)
        claim_token = pw.CharField(max_length=40, null=True)
        review_reason = pw.CharField(max_length=64, null=True)
        completed_at = pw.DateTimeField(null=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()

        class Meta:
            indexes = ((("store", "created_at"), False),)

    db.create_tables([Refund], safe=False)
    db.execute_sql("CREATE INDEX refund_due ON refund (next_poll_at) WHERE next_poll_at IS NOT NULL")
    db.execute_sql("CREATE INDEX refund_status_expires_at ON refund (status, expires_at)")
    migrator.migrate(
        migrator.add_column("invoice", "refunded_amount", AmountField(null=True)),
        migrator.add_column("transaction", "refund_id",
                            pw.ForeignKeyField(Refund, field=Refund.id, null=True, on_delete="SET NULL",
                                               index=False)),
    )
    grant_refund_scopes(db)
    if isinstance(db, pw.PostgresqlDatabase):
        for statement in STATEMENTS:
            db.execute_sql(statement)


def grant_refund_scopes(db):
    """Keys issued before refunds existed: a key that may change invoices may refund them, one that
    may read them may read their refunds, and a storefront's integration key gets both (its own
    installation's invoices only). Limited keys gain nothing beyond what they hold for invoices."""
    holds = f"(' ' || scopes || ' ') LIKE {db.param}"
    write, read = "% invoices:write %", "% invoices:read %"
    db.execute_sql("UPDATE api_key SET scopes = scopes || ' refunds:write refunds:read' "
                   f"WHERE kind = 'integration' OR (kind = 'standard' AND {holds})", (write,))
    db.execute_sql("UPDATE api_key SET scopes = scopes || ' refunds:read' "
                   f"WHERE kind = 'standard' AND {holds} AND NOT {holds}", (read, write))


# The settlement statement's roll-up (0008) learns the refunded sum: a refund transaction that
# belongs to a merchant refund adds that refund's amount, in the invoice currency, on its day.
STATEMENTS = [
    "ALTER TABLE settlement_day ADD COLUMN refunded numeric NOT NULL DEFAULT 0",
    """
    CREATE OR REPLACE FUNCTION settlement_day_transaction() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        paid record;
    BEGIN
        SELECT currency, difference_amount INTO paid FROM invoice WHERE id = NEW.invoice_id;
        IF NEW.type = 'settlement' THEN
            PERFORM settlement_day_add(NEW.store_id, date(NEW.created_at), paid.currency, 0, 0, NEW.amount,
                                       paid.difference_amount, 0, 1);
        ELSE
            PERFORM settlement_day_add(NEW.store_id, date(NEW.created_at), paid.currency, 0, 0, 0, 0, 1, 1);
            IF NEW.refund_id IS NOT NULL THEN
                UPDATE settlement_day SET refunded = refunded + (SELECT amount FROM refund WHERE id = NEW.refund_id)
                WHERE store_id = NEW.store_id AND day = date(NEW.created_at) AND currency = paid.currency;
            END IF;
        END IF;
        RETURN NULL;
    END
    $$
    """,
]
