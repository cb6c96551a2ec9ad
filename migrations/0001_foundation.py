"""Stores, API keys, invoices, transactions and the event outbox.

Frozen copies of the tables as they were when this migration was written: later changes to
models/ must come as new migrations, never as edits here. Index reasoning: docs/indexes.md.
"""
import peewee as pw

from models.fields import AmountField, JSONTextField


def up(migrator, db):
    class Base(pw.Model):
        class Meta:
            database = db
            legacy_table_names = False

    class Store(Base):
        id = pw.UUIDField(primary_key=True)
        name = pw.CharField(max_length=200)
        payout_wallet = pw.CharField(max_length=256, null=True)
        output_asset = pw.CharField(max_length=64)
        callback_secret = pw.CharField(max_length=64)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()

    class ApiKey(Base):
        id = pw.CharField(primary_key=True, max_length=40)
        store = pw.ForeignKeyField(Store, on_delete="CASCADE")
        kind = pw.CharField(max_length=16)
        digest = pw.CharField(max_length=64, unique=True)
        last4 = pw.CharField(max_length=4)
        scopes = pw.TextField()
        created_at = pw.DateTimeField()
        expires_at = pw.DateTimeField(null=True)
        revoked_at = pw.DateTimeField(null=True)
        consumed_at = pw.DateTimeField(null=True)

    class Invoice(Base):
        id = pw.UUIDField(primary_key=True)
        public_id = pw.CharField(max_length=40, unique=True)
        store = pw.ForeignKeyField(Store, on_delete="CASCADE", index=False)
        status = pw.CharField(max_length=20)
        amount = AmountField()
        currency = pw.CharField(max_length=3)
        order_amount = AmountField()
        order_currency = pw.CharField(max_length=3)
        output_asset = pw.CharField(max_length=64)
        external_order_id = pw.CharField(max_length=128, null=True)
        customer_id = pw.UUIDField(null=True)
        payment_link_id = pw.CharField(max_length=40, null=True)
        return_url = pw.TextField(null=True)
        callback_url = pw.TextField(null=True)
        metadata = JSONTextField(null=True)
        paid_amount = AmountField(null=True)
        received_amount = AmountField(null=True)
        difference_amount = AmountField(null=True)
        swap_status = pw.CharField(max_length=20, null=True)
        transaction_hash = pw.CharField(max_length=256, null=True)
        deposit_address = pw.CharField(max_length=256, null=True)
        deposit_memo = pw.CharField(max_length=256, null=True)
        deposit_seen_at = pw.DateTimeField(null=True)
        paid_at = pw.DateTimeField(null=True)
        expires_at = pw.DateTimeField()
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()

        class Meta:
            indexes = (
                (("store", "created_at", "id"), False),
                (("store", "status", "created_at", "id"), False),
                (("store", "external_order_id", "created_at", "id"), False),
                (("store", "customer_id", "created_at", "id"), False),
                (("store", "payment_link_id", "created_at", "id"), False),
                (("store", "paid_at", "id"), False),
            )

    class Transaction(Base):
        id = pw.UUIDField(primary_key=True)
        public_id = pw.CharField(max_length=40, unique=True)
        store = pw.ForeignKeyField(Store, on_delete="CASCADE", index=False)
        invoice = pw.ForeignKeyField(Invoice, on_delete="CASCADE", index=False)
        type = pw.CharField(max_length=20)
        network = pw.CharField(max_length=40, null=True)
        token = pw.CharField(max_length=64)
        amount = AmountField()
        transaction_hash = pw.CharField(max_length=256)
        from_wallet = pw.CharField(max_length=256, null=True)
        to_wallet = pw.CharField(max_length=256, null=True)
        confirmations = pw.IntegerField(null=True)
        status = pw.CharField(max_length=20)
        verified = pw.BooleanField(default=False)
        confirmed_at = pw.DateTimeField(null=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()

        class Meta:
            indexes = (
                (("store", "created_at", "id"), False),
                (("store", "type", "created_at", "id"), False),
                (("store", "status", "created_at", "id"), False),
                (("store", "transaction_hash"), False),
                (("invoice", "created_at", "id"), False),
            )

    class Event(Base):
        id = pw.UUIDField(primary_key=True)
        public_id = pw.CharField(max_length=40, unique=True)
        store = pw.ForeignKeyField(Store, on_delete="CASCADE", index=False)
        invoice = pw.ForeignKeyField(Invoice, null=True, on_delete="CASCADE")
        type = pw.CharField(max_length=40)
        payload = JSONTextField()
        created_at = pw.DateTimeField()
        dispatched_at = pw.DateTimeField(null=True)

        class Meta:
            indexes = ((("store", "created_at", "id"), False),)

    db.create_tables([Store, ApiKey, Invoice, Transaction, Event])
    # The relay scans only undispatched events: a partial index keeps that scan as small
    # as the backlog, not the table (both PostgreSQL and SQLite support it).
    db.execute_sql("CREATE INDEX event_undispatched ON event (created_at) WHERE dispatched_at IS NULL")
