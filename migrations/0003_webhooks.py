"""Webhook endpoints, deliveries and their attempts (issue 4). Frozen copies, as 0001 does."""
import peewee as pw

from models.fields import JSONTextField


def up(migrator, db):
    class Base(pw.Model):
        class Meta:
            database = db
            legacy_table_names = False

    class Store(Base):                      # existing tables, declared only to point at
        id = pw.UUIDField(primary_key=True)

    class Event(Base):
        id = pw.UUIDField(primary_key=True)

    class WebhookEndpoint(Base):
        id = pw.UUIDField(primary_key=True)
        public_id = pw.CharField(max_length=40, unique=True)
        store = pw.ForeignKeyField(Store, on_delete="CASCADE", index=False)
        name = pw.CharField(max_length=100, null=True)
        url = pw.TextField()
        events = JSONTextField()
        secret = pw.CharField(max_length=80)
        previous_secret = pw.CharField(max_length=80, null=True)
        previous_secret_expires_at = pw.DateTimeField(null=True)
        enabled = pw.BooleanField(default=True)
        disabled_reason = pw.CharField(max_length=200, null=True)
        failing_since = pw.DateTimeField(null=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()

        class Meta:
            indexes = ((("store", "created_at", "id"), False),)

    class WebhookDelivery(Base):
        id = pw.UUIDField(primary_key=True)
        public_id = pw.CharField(max_length=40, unique=True)
        store = pw.ForeignKeyField(Store, on_delete="CASCADE", index=False)
        event = pw.ForeignKeyField(Event, on_delete="CASCADE", index=False)
        endpoint = pw.ForeignKeyField(WebhookEndpoint, null=True, on_delete="CASCADE", index=False)
        target_key = pw.CharField(max_length=40)
        url = pw.TextField(null=True)
        status = pw.CharField(max_length=16)
        attempts = pw.IntegerField(default=0)
        next_attempt_at = pw.DateTimeField(null=True)
        claim_token = pw.CharField(max_length=32, null=True)
        last_attempt_at = pw.DateTimeField(null=True)
        last_status_code = pw.IntegerField(null=True)
        last_latency_ms = pw.IntegerField(null=True)
        last_error = pw.TextField(null=True)
        last_response_excerpt = pw.TextField(null=True)
        succeeded_at = pw.DateTimeField(null=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()

        class Meta:
            indexes = (
                (("event", "target_key"), True),                  # fan-out is idempotent per target
                (("endpoint", "created_at", "id"), False),        # an endpoint's deliveries, newest first
            )

    class WebhookAttempt(Base):
        id = pw.UUIDField(primary_key=True)
        delivery = pw.ForeignKeyField(WebhookDelivery, on_delete="CASCADE", index=False)
        number = pw.IntegerField()
        outcome = pw.CharField(max_length=16)
        started_at = pw.DateTimeField()
        status_code = pw.IntegerField(null=True)
        latency_ms = pw.IntegerField(null=True)
        error = pw.TextField(null=True)
        response_excerpt = pw.TextField(null=True)

        class Meta:
            indexes = ((("delivery", "number"), False),)

    db.create_tables([WebhookEndpoint, WebhookDelivery, WebhookAttempt])
    # The claim scans only pending deliveries by due time: a partial index keeps that scan as
    # small as the backlog, however many finished deliveries the table holds.
    db.execute_sql("CREATE INDEX webhook_delivery_due ON webhook_delivery (next_attempt_at) "
                   "WHERE status = 'pending'")
