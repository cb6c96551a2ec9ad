"""Storefront integrations (issue 6): installations, and the link from an invoice to one.

Frozen copies, as in 0001: later model changes come as new migrations.
"""
import peewee as pw


def up(migrator, db):
    class Base(pw.Model):
        class Meta:
            database = db
            legacy_table_names = False

    class Store(Base):                      # existing tables, declared only to point at
        id = pw.UUIDField(primary_key=True)

    class ApiKey(Base):
        id = pw.CharField(primary_key=True, max_length=40)

    class WebhookEndpoint(Base):
        id = pw.UUIDField(primary_key=True)

    class Integration(Base):
        id = pw.UUIDField(primary_key=True)
        public_id = pw.CharField(max_length=40, unique=True)
        installation_id = pw.CharField(max_length=40, unique=True)
        store = pw.ForeignKeyField(Store, on_delete="CASCADE", index=False)
        platform = pw.CharField(max_length=32)
        site_url = pw.TextField()
        webhook_url = pw.TextField()
        webhook_endpoint = pw.ForeignKeyField(WebhookEndpoint, null=True, on_delete="SET NULL", unique=True)
        api_key = pw.ForeignKeyField(ApiKey, null=True, on_delete="SET NULL", index=False)
        status = pw.CharField(max_length=16)
        plugin_version = pw.CharField(max_length=64, null=True)
        cms_version = pw.CharField(max_length=64, null=True)
        platform_version = pw.CharField(max_length=64, null=True)
        connected_at = pw.DateTimeField()
        disconnected_at = pw.DateTimeField(null=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()

        class Meta:
            # A site reconnects to its own row; the lookup by the dedicated key (invoice create).
            indexes = ((("store", "platform", "site_url"), True), (("api_key",), False))

    db.create_tables([Integration], safe=False)
    # At most one active installation per store and platform, whatever the application does.
    db.execute_sql("CREATE UNIQUE INDEX integration_one_active ON integration (store_id, platform) "
                   "WHERE status = 'active'")
    migrator.migrate(migrator.add_column(
        "invoice", "integration_id",
        pw.ForeignKeyField(Integration, field=Integration.id, null=True, on_delete="SET NULL", index=False)))
    # The external-order conflict check of create invoice: (installation, order id).
    db.execute_sql("CREATE INDEX invoice_integration_order ON invoice (integration_id, external_order_id) "
                   "WHERE integration_id IS NOT NULL")
