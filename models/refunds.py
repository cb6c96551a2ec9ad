import peewee as pw

from models.base import BaseModel
from models.fields import AmountField
from models.invoices import Invoice
from models.stores import Store

# awaiting_funds -> processing -> succeeded | failed; awaiting_funds -> expired | cancelled (docs/refunds.md).
STATUSES = ("awaiting_funds", "processing", "succeeded", "failed", "expired", "cancelled")


class Refund(BaseModel):
    """A merchant's refund of an invoice: a swap the other way, from the store's payout asset to the
    buyer's asset, which the merchant funds by sending `funding_amount` to `deposit_address`.

    The polling columns carry the names the invoice's do (deposit_address, provider_status, ...),
    so the engine's poller follows both with the same functions; its schedule and claim are its
    poll state (models/polls.py), as an invoice's are."""

    id = pw.UUIDField(primary_key=True)
    public_id = pw.CharField(max_length=40, unique=True)        # ref_…
    store = pw.ForeignKeyField(Store, backref="refunds", on_delete="CASCADE", index=False)
    invoice = pw.ForeignKeyField(Invoice, backref="refunds", on_delete="CASCADE")
    status = pw.CharField(max_length=20)
    amount = AmountField()                                      # invoice currency
    currency = pw.CharField(max_length=3)
    reason = pw.CharField(max_length=500, null=True)
    asset = pw.CharField(max_length=64)                         # what the buyer receives
    refund_to = pw.CharField(max_length=256)                    # the buyer's address for it
    estimated_amount_out = AmountField()                        # the quote's promise, buyer-asset units
    delivered_amount = AmountField(null=True)                   # what the provider says it delivered
    transaction_hash = pw.CharField(max_length=256, null=True)  # the delivery to the buyer
    # What the merchant sends: the store's output asset, to the quote's one-time address.
    funding_asset = pw.CharField(max_length=64)
    funding_amount = AmountField()
    deposit_address = pw.CharField(max_length=256)
    deposit_memo = pw.CharField(max_length=256, null=True)
    expires_at = pw.DateTimeField()                             # the funding deadline
    funded_amount = AmountField(null=True)                      # what reached the address
    funding_tx_hash = pw.CharField(max_length=256, null=True)
    returned_amount = AmountField(null=True)                    # what the provider sent back to the merchant
    return_tx_hash = pw.CharField(max_length=256, null=True)
    failure_reason = pw.CharField(max_length=32, null=True)
    # The engine's bookkeeping, as on the invoice.
    provider_ref = pw.CharField(max_length=128, null=True)
    origin_decimals = pw.SmallIntegerField(null=True)
    destination_decimals = pw.SmallIntegerField(null=True)
    provider_status = pw.CharField(max_length=32, null=True)
    quoted_at = pw.DateTimeField()
    deposit_seen_at = pw.DateTimeField(null=True)
    # The provider, asked after the funding deadline, knew of no funding: no swap can deliver now.
    funding_closed_at = pw.DateTimeField(null=True)
    review_reason = pw.CharField(max_length=64, null=True)
    completed_at = pw.DateTimeField(null=True)
    created_at = pw.DateTimeField()
    updated_at = pw.DateTimeField()

    class Meta:
        indexes = ((("store", "created_at", "id"), False), (("store", "status", "created_at", "id"), False))  # 0021
