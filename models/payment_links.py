import peewee as pw

from models.base import BaseModel
from models.fields import AmountField
from models.stores import Store

FIXED = "fixed_amount"
CUSTOMER_DEFINED = "customer_defined_amount"
AMOUNT_MODES = (FIXED, CUSTOMER_DEFINED)
STATUSES = ("active", "inactive", "completed")
REUSABLE, SINGLE_USE = "reusable", "single_use"
USAGES = (REUSABLE, SINGLE_USE)


class PaymentLink(BaseModel):
    """A reusable or single-use link. Merchants address it by `public_id` (plink_…), buyers by
    `plpub_id` (plpub_…, 32 hex) or, for links issued before June 2026, `legacy_plpub_id` (12)."""

    id = pw.UUIDField(primary_key=True)                       # internal; never in a response
    public_id = pw.CharField(max_length=40, unique=True)      # plink_… (named like every model's, for paging)
    plpub_id = pw.CharField(max_length=40, unique=True)       # plpub_ + 32 hex: what responses carry
    legacy_plpub_id = pw.CharField(max_length=20, null=True, unique=True)  # plpub_ + 12: still resolves
    store = pw.ForeignKeyField(Store, backref="payment_links", on_delete="CASCADE")
    title = pw.CharField(max_length=200)
    amount_mode = pw.CharField(max_length=32)                 # fixed_amount | customer_defined_amount
    amount = AmountField(null=True)                           # fixed mode only
    min_amount = AmountField(null=True)                       # customer-defined mode only
    max_amount = AmountField(null=True)
    currency = pw.CharField(max_length=3)
    allow_multiple_payments = pw.BooleanField()
    public_visible = pw.BooleanField()
    status = pw.CharField(max_length=16)                      # active | inactive | completed
    checkout_started_at = pw.DateTimeField(null=True)         # first checkout: pricing is locked from here
    completed_at = pw.DateTimeField(null=True)
    created_at = pw.DateTimeField()
    updated_at = pw.DateTimeField()

    @property
    def usage(self) -> str:
        return REUSABLE if self.allow_multiple_payments else SINGLE_USE


class IdempotencyKey(BaseModel):
    """One `Idempotency-Key` of one store, kept 24 hours. The unique (store, scope, key) is the lock:
    of two concurrent requests with one key, exactly one can insert the row."""

    id = pw.UUIDField(primary_key=True)
    store = pw.ForeignKeyField(Store, backref="idempotency_keys", on_delete="CASCADE")
    scope = pw.CharField(max_length=128, default="")         # "key <id>" per API key; buyer routes: object and client
    key = pw.CharField(max_length=255)
    fingerprint = pw.CharField(max_length=64)                 # SHA-256 of the route and canonical body
    status = pw.CharField(max_length=16)                      # in_progress | complete
    locked_at = pw.DateTimeField()                            # when the running request claimed it
    response_status = pw.IntegerField(null=True)
    response_body = pw.TextField(null=True)                   # JSON text as first sent, keys in order
    created_at = pw.DateTimeField()
    expires_at = pw.DateTimeField()

    class Meta:
        indexes = ((("store", "scope", "key"), True),)
