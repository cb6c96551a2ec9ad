"""Mail (issue 40): the mail outbox, each store's notification settings, and the buyer's address
an invoice may carry (docs/email.md).

`mail` rows are claimed by senders like poll states (a lease and a token); the partial index lists
the pending ones by when they are due. `dedupe_key` is unique, so a fact reported twice writes one mail.
"""
import peewee as pw


def up(migrator, db):
    class Store(pw.Model):
        id = pw.UUIDField(primary_key=True)

        class Meta:
            database = db
            table_name = "store"

    class Mail(pw.Model):
        id = pw.UUIDField(primary_key=True)
        public_id = pw.CharField(max_length=40, unique=True)
        store = pw.ForeignKeyField(Store, null=True, on_delete="CASCADE", index=False)
        kind = pw.CharField(max_length=40)
        audience = pw.CharField(max_length=16)
        recipient = pw.CharField(max_length=254)
        dedupe_key = pw.CharField(max_length=400, unique=True)
        message_id = pw.CharField(max_length=200)
        subject = pw.TextField()
        text_body = pw.TextField()
        html_body = pw.TextField()
        status = pw.CharField(max_length=16, default="pending")
        attempts = pw.IntegerField(default=0)
        next_attempt_at = pw.DateTimeField()
        claimed_until = pw.DateTimeField(null=True)
        claim_token = pw.CharField(max_length=40, null=True)
        last_answer = pw.TextField(null=True)
        sent_at = pw.DateTimeField(null=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()

        class Meta:
            database = db
            table_name = "mail"

    class StoreNotifications(pw.Model):
        store = pw.ForeignKeyField(Store, primary_key=True, on_delete="CASCADE")
        recipients = pw.TextField()
        kinds = pw.TextField()
        updated_at = pw.DateTimeField()

        class Meta:
            database = db
            table_name = "store_notifications"

    db.create_tables([Mail, StoreNotifications])
    db.execute_sql("CREATE INDEX mail_due ON mail (next_attempt_at) WHERE status = 'pending'")
    db.execute_sql("CREATE INDEX mail_claim_token ON mail (claim_token) WHERE claim_token IS NOT NULL")
    db.execute_sql("CREATE INDEX mail_store_created_at ON mail (store_id, created_at)")
    migrator.migrate(migrator.add_column("invoice", "customer_email", pw.CharField(max_length=254, null=True)))
    grant_settings_scopes(db)


def grant_settings_scopes(db):
    """Standard keys issued before store settings existed: one that may change the store's webhooks
    may change its mail settings, one that may read them may read these. Integration keys get none."""
    holds = f"(' ' || scopes || ' ') LIKE {db.param}"
    write, read = "% webhooks:write %", "% webhooks:read %"
    db.execute_sql("UPDATE api_key SET scopes = scopes || ' settings:read settings:write' "
                   f"WHERE kind = 'standard' AND {holds}", (write,))
    db.execute_sql("UPDATE api_key SET scopes = scopes || ' settings:read' "
                   f"WHERE kind = 'standard' AND {holds} AND NOT {holds}", (read, write))
