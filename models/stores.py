import peewee as pw

from models.base import BaseModel


class Store(BaseModel):
    id = pw.UUIDField(primary_key=True)
    name = pw.CharField(max_length=200)
    payout_wallet = pw.CharField(max_length=256, null=True)
    output_asset = pw.CharField(max_length=64, default="usdc.near")
    callback_secret = pw.CharField(max_length=64)   # signs legacy callback_url deliveries
    require_totp = pw.BooleanField(default=False)   # the dashboard: an owner requires TOTP of everyone
    fee_bps = pw.SmallIntegerField(null=True)       # the operator's fee for this store; null: OPERATOR_FEE_BPS
    created_at = pw.DateTimeField()
    updated_at = pw.DateTimeField()


class ApiKey(BaseModel):
    """A store-scoped key. Only the SHA-256 digest of the key is stored, plus its last four."""

    id = pw.CharField(primary_key=True, max_length=40)          # key_…: operator-facing handle
    store = pw.ForeignKeyField(Store, backref="api_keys", on_delete="CASCADE")
    kind = pw.CharField(max_length=16)                          # standard | bootstrap | integration
    digest = pw.CharField(max_length=64, unique=True)
    last4 = pw.CharField(max_length=4)
    scopes = pw.TextField()                                     # space-separated
    created_at = pw.DateTimeField()
    expires_at = pw.DateTimeField(null=True)
    revoked_at = pw.DateTimeField(null=True)
    consumed_at = pw.DateTimeField(null=True)                   # bootstrap keys: first connect
    consumed_for = pw.TextField(null=True)                      # bootstrap keys: the site that connect was for
    first_used_at = pw.DateTimeField(null=True)                 # integration keys: first request authenticated
    last_used_at = pw.DateTimeField(null=True)                  # to the minute: api_keys.note_use
    issued_by = pw.CharField(max_length=40, null=True)          # integration keys: the bootstrap key whose connect issued it

    @property
    def scope_set(self) -> frozenset:
        return frozenset(self.scopes.split())
