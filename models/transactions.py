import peewee as pw

from models.base import BaseModel
from models.fields import AmountField
from models.invoices import Invoice
from models.refunds import Refund
from models.stores import Store

TYPES = ("payment_origin", "settlement", "refund")
STATUSES = ("pending", "confirmed", "failed")


class Transaction(BaseModel):
    id = pw.UUIDField(primary_key=True)
    public_id = pw.CharField(max_length=40, unique=True)   # txn_…
    store = pw.ForeignKeyField(Store, backref="transactions", on_delete="CASCADE")
    invoice = pw.ForeignKeyField(Invoice, backref="transactions", on_delete="CASCADE")
    type = pw.CharField(max_length=20)                     # payment_origin | settlement | refund
    # The merchant refund a `refund` movement delivered (null for the provider's own refunds).
    refund = pw.ForeignKeyField(Refund, backref="transactions", null=True, on_delete="SET NULL", index=False)
    network = pw.CharField(max_length=40, null=True)
    token = pw.CharField(max_length=64)
    amount = AmountField()
    transaction_hash = pw.CharField(max_length=256)
    from_wallet = pw.CharField(max_length=256, null=True)
    to_wallet = pw.CharField(max_length=256, null=True)
    confirmations = pw.IntegerField(null=True)
    status = pw.CharField(max_length=20)                   # pending | confirmed | failed
    verified = pw.BooleanField(default=False)
    confirmed_at = pw.DateTimeField(null=True)
    created_at = pw.DateTimeField()
    updated_at = pw.DateTimeField()
