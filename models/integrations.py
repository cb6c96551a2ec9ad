import peewee as pw

from models.base import BaseModel
from models.stores import ApiKey, Store
from models.webhooks import WebhookEndpoint

# The connection state the status route reports (a store that never connected has no row).
ACTIVE, DISCONNECTED, NOT_CONNECTED = "ACTIVE", "DISCONNECTED", "NOT_CONNECTED"
CONNECTION_STATES = (ACTIVE, DISCONNECTED, NOT_CONNECTED)


class Integration(BaseModel):
    """One installation of a storefront plugin: a store on one site of one platform.

    Reconnecting the same site reuses the row (its ids stay); another site after a disconnect is a
    new row, so order ids of two different shops never meet (docs/decisions.md)."""

    id = pw.UUIDField(primary_key=True)                          # integration_id (a UUID in the API)
    public_id = pw.CharField(max_length=40, unique=True)         # int_…: X-Tender-Integration-Id
    installation_id = pw.CharField(max_length=40, unique=True)   # inst_…
    store = pw.ForeignKeyField(Store, backref="integrations", on_delete="CASCADE", index=False)
    platform = pw.CharField(max_length=32)
    site_url = pw.TextField()                                    # normalised: lower-case host, no trailing /
    webhook_url = pw.TextField()
    # The installation's webhook endpoint holds the signing secret; the dedicated key is the live one.
    webhook_endpoint = pw.ForeignKeyField(WebhookEndpoint, null=True, on_delete="SET NULL", unique=True)
    api_key = pw.ForeignKeyField(ApiKey, null=True, on_delete="SET NULL", index=False)
    status = pw.CharField(max_length=16)                         # active | disconnected
    plugin_version = pw.CharField(max_length=64, null=True)
    cms_version = pw.CharField(max_length=64, null=True)
    platform_version = pw.CharField(max_length=64, null=True)
    connected_at = pw.DateTimeField()
    disconnected_at = pw.DateTimeField(null=True)
    created_at = pw.DateTimeField()
    updated_at = pw.DateTimeField()
