"""Payment links and the idempotency keys of their create route.

Frozen copies, as in 0001: later model changes come as new migrations.
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

    class PaymentLink(Base):
        id = pw.UUIDField(primary_key=True)
        public_id = pw.CharField(max_length=40, unique=True)
        plpub_id = pw.CharField(max_length=40, unique=True)
        legacy_plpub_id = pw.CharField(max_length=20, null=True, unique=True)
        store = pw.ForeignKeyField(Store, on_delete="CASCADE", index=False)
        title = pw.CharField(max_length=200)
        amount_mode = pw.CharField(max_length=32)
        amount = AmountField(null=True)
        min_amount = AmountField(null=True)
        max_amount = AmountField(null=True)
        currency = pw.CharField(max_length=3)
        allow_multiple_payments = pw.BooleanField()
        public_visible = pw.BooleanField()
        status = pw.CharField(max_length=16)
        checkout_started_at = pw.DateTimeField(null=True)
        completed_at = pw.DateTimeField(null=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()

        class Meta:
            # The merchant list pages newest first within a store (keyset on created_at, id).
            indexes = ((("store", "created_at", "id"), False),)

    class IdempotencyKey(Base):
        id = pw.UUIDField(primary_key=True)
        store = pw.ForeignKeyField(Store, on_delete="CASCADE", index=False)
        key = pw.CharField(max_length=255)
        fingerprint = pw.CharField(max_length=64)
        status = pw.CharField(max_length=16)
        locked_at = pw.DateTimeField()
        response_status = pw.IntegerField(null=True)
        response_body = pw.TextField(null=True)
        created_at = pw.DateTimeField()
        expires_at = pw.DateTimeField()

        class Meta:
            # Unique: the database, not the application, decides which of two racing requests
            # owns a key. It also serves the lookup by (store, key).
            indexes = ((("store", "key"), True),)

    db.create_tables([PaymentLink, IdempotencyKey], safe=False)
    # The purge of expired keys scans by expiry.
    db.execute_sql("CREATE INDEX idempotency_key_expires_at ON idempotency_key (expires_at)")
