import peewee as pw

from models.base import BaseModel
from models.fields import AmountField, JSONTextField
from models.stores import Store

# Every status an invoice can have (services/engine/invoice_states.py moves between them).
STATUSES = ("pending", "quoted", "awaiting_payment", "paid", "underpaid", "expired", "failed",
            "refunded", "cancelled")


class Invoice(BaseModel):
    id = pw.UUIDField(primary_key=True)                    # internal; never in a response
    public_id = pw.CharField(max_length=40, unique=True)   # inv_…
    store = pw.ForeignKeyField(Store, backref="invoices", on_delete="CASCADE")
    status = pw.CharField(max_length=20)
    amount = AmountField()
    currency = pw.CharField(max_length=3)
    order_amount = AmountField()
    order_currency = pw.CharField(max_length=3)
    output_asset = pw.CharField(max_length=64)
    external_order_id = pw.CharField(max_length=128, null=True)
    customer_id = pw.UUIDField(null=True)
    customer_email = pw.CharField(max_length=254, null=True)   # the buyer's, for the receipt (0018)
    payment_link_id = pw.CharField(max_length=40, null=True)   # plink_… of the link it came from
    # The storefront installation whose dedicated key created it (models/integrations.py; a plain
    # column here, the foreign key is in migration 0005, to keep the model imports acyclic).
    integration_id = pw.UUIDField(null=True)
    return_url = pw.TextField(null=True)
    callback_url = pw.TextField(null=True)
    metadata = JSONTextField(null=True)
    # What the payment engine learns; null until it does.
    paid_amount = AmountField(null=True)
    received_amount = AmountField(null=True)
    difference_amount = AmountField(null=True)
    swap_status = pw.CharField(max_length=20, null=True)
    transaction_hash = pw.CharField(max_length=256, null=True)
    deposit_address = pw.CharField(max_length=256, null=True)
    deposit_memo = pw.CharField(max_length=256, null=True)
    deposit_seen_at = pw.DateTimeField(null=True)
    paid_at = pw.DateTimeField(null=True)
    refunded_amount = AmountField(null=True)               # merchant refunds that succeeded (0012)
    # Fixed when the buyer commits (migration 0019, docs/currencies.md): 1 `currency` = `exchange_rate`
    # units of the output asset's currency (null at par), what the merchant is owed in the output asset,
    # and the operator's fee (basis points; its amount in the invoice currency, null when none).
    exchange_rate = AmountField(null=True)
    exchange_rate_source = pw.CharField(max_length=32, null=True)
    exchange_rate_fixed_at = pw.DateTimeField(null=True)
    payout_amount = AmountField(null=True)
    fee_bps = pw.SmallIntegerField(null=True)
    fee_amount = AmountField(null=True)
    expires_at = pw.DateTimeField()
    # The payment engine's bookkeeping (migrations/0002_engine.py); never in a response as such.
    origin_asset = pw.CharField(max_length=64, null=True)
    refund_to = pw.CharField(max_length=256, null=True)
    amount_due = AmountField(null=True)
    quoted_at = pw.DateTimeField(null=True)
    provider_ref = pw.CharField(max_length=128, null=True)
    origin_decimals = pw.SmallIntegerField(null=True)        # migrations/0007_quote_decimals.py
    destination_decimals = pw.SmallIntegerField(null=True)
    provider_status = pw.CharField(max_length=32, null=True)
    settled_at = pw.DateTimeField(null=True)
    review_reason = pw.CharField(max_length=64, null=True)
    created_at = pw.DateTimeField()
    updated_at = pw.DateTimeField()
