"""Payment engine: what the invoice learns from the provider, the polling schedule and claim,
the sandbox's simulated chain, and one row per on-chain movement.

Index reasoning (docs/payment-engine.md): the expiry sweep reads (status, expires_at); the
pollers read only invoices that have a `next_poll_at`, through a partial index as small as the
open work; a transaction is unique per (invoice, type, hash), so a replayed poll cannot record
one twice.
"""
import peewee as pw

from models.fields import AmountField

INVOICE_COLUMNS = (
    ("origin_asset", pw.CharField(max_length=64, null=True)),       # what the buyer pays in
    ("refund_to", pw.CharField(max_length=256, null=True)),
    ("amount_due", AmountField(null=True)),                         # origin units the buyer must send
    ("quoted_at", pw.DateTimeField(null=True)),                     # when the deposit address was issued
    ("provider_ref", pw.CharField(max_length=128, null=True)),      # the provider's correlation id
    ("provider_status", pw.CharField(max_length=32, null=True)),    # last status the provider gave
    ("next_poll_at", pw.DateTimeField(null=True)),                  # null: nothing left to ask
    ("claimed_until", pw.DateTimeField(null=True)),                 # a poller's lease on the row
    ("claim_token", pw.CharField(max_length=40, null=True)),
    ("settled_at", pw.DateTimeField(null=True)),
    ("review_reason", pw.CharField(max_length=64, null=True)),      # settlement held for a human
)


def up(migrator, db):
    migrator.migrate(*[migrator.add_column("invoice", name, field) for name, field in INVOICE_COLUMNS])
    db.execute_sql("CREATE INDEX invoice_status_expires_at ON invoice (status, expires_at)")
    db.execute_sql("CREATE INDEX invoice_next_poll_at ON invoice (next_poll_at) WHERE next_poll_at IS NOT NULL")
    db.execute_sql("CREATE INDEX invoice_claim_token ON invoice (claim_token) WHERE claim_token IS NOT NULL")
    db.execute_sql('CREATE UNIQUE INDEX transaction_invoice_type_hash ON "transaction" '
                   "(invoice_id, type, transaction_hash)")

    class SandboxDeposit(pw.Model):
        deposit_address = pw.CharField(max_length=256, primary_key=True)
        deposit_memo = pw.CharField(max_length=64, null=True)
        correlation_id = pw.CharField(max_length=64)
        origin_asset = pw.CharField(max_length=64)
        destination_asset = pw.CharField(max_length=64)
        amount_in = AmountField()
        amount_out = AmountField()
        recipient = pw.CharField(max_length=256)
        refund_to = pw.CharField(max_length=256)
        deadline = pw.DateTimeField()
        created_at = pw.DateTimeField()
        outcome = pw.CharField(max_length=16, null=True)       # success | underpaid | refunded | failed
        deposited_amount = AmountField(null=True)
        deposited_at = pw.DateTimeField(null=True)
        polls = pw.IntegerField(default=0)                     # status reads since the deposit
        origin_tx_hash = pw.CharField(max_length=128, null=True)
        destination_tx_hash = pw.CharField(max_length=128, null=True)
        refund_tx_hash = pw.CharField(max_length=128, null=True)

        class Meta:
            database = db
            legacy_table_names = False

    db.create_tables([SandboxDeposit])
