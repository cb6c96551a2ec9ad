"""Buyer-facing and test-helper shapes of the payment engine (docs/payment-engine.md, docs/checkout.md)."""
from marshmallow import RAISE, Schema, fields, validate

from core import networks, urls
from models.invoices import STATUSES as INVOICE_STATUSES
from providers.sandbox import OUTCOMES
from schemas.fields import AmountString, EmailAddress, FixedRate, RateString, StrictString, UtcDateTime, one_of

_ASSET_CODE = validate.Length(min=1, max=64)
_ADDRESS = validate.Length(min=1, max=256)


class SimulatedPaymentSchema(Schema):
    class Meta:
        unknown = RAISE

    outcome = fields.String(load_default=None, validate=validate.OneOf(OUTCOMES))
    amount = AmountString(fiat=False, load_default=None)       # origin-asset units deposited
    origin_asset = StrictString(load_default=None, validate=_ASSET_CODE)
    refund_to = StrictString(load_default=None, validate=_ADDRESS)


class BuyerSimulatedPaymentSchema(Schema):
    """The hosted page's sandbox control: only the outcome; the amount is the quoted one."""

    class Meta:
        unknown = RAISE

    outcome = fields.String(load_default=None, validate=validate.OneOf(OUTCOMES))


class QuoteCreateSchema(Schema):
    class Meta:
        unknown = RAISE

    origin_asset = StrictString(required=True, validate=_ASSET_CODE)
    refund_to = StrictString(load_default=None, validate=_ADDRESS)
    dry = fields.Boolean(load_default=True, truthy={True}, falsy={False})
    customer_email = EmailAddress(load_default=None, allow_none=True, metadata={"description": "Optional: where the buyer wants the receipt of this payment (and a notice if it is refunded); kept when the merchant gave one already."})


class AssetSchema(Schema):
    code = fields.String()
    symbol = fields.String()
    network = fields.String()
    decimals = fields.Integer()
    needs_memo = fields.Boolean()


class BuyerRefundSchema(Schema):
    """Where a refund went: its asset, the sum sent in it, and the address, shortened."""

    amount = AmountString(fiat=False)
    asset = fields.String()
    address = fields.Function(lambda refund: networks.shortened(refund.address), allow_none=True, metadata={
        "description": "The address it went to, shortened (`0x1234…abcd`): enough for its owner to recognise."})
    transaction_hash = fields.String(allow_none=True)


class PublicInvoiceSchema(Schema):
    """What a buyer may see: no metadata, no merchant ids, no order references.

    `amount_received`, `amount_remaining` and `refund` are filled by
    `services.engine.buyer_payments.with_payment_details` (omitted when it was not called)."""

    id = fields.Function(lambda invoice: invoice.public_id)
    status = one_of(INVOICE_STATUSES)
    swap_status = fields.String(allow_none=True)
    amount = AmountString()
    currency = fields.String()
    store_name = fields.Function(lambda invoice: invoice.store.name)
    origin_asset = fields.String(allow_none=True)
    amount_due = AmountString(fiat=False, allow_none=True)                      # origin-asset units to send
    deposit_address = fields.String(allow_none=True)
    deposit_memo = fields.String(allow_none=True)
    # Shortened: anyone holding the invoice id reads this view, the payer recognises their own address.
    refund_to = fields.Function(lambda invoice: networks.shortened(invoice.refund_to), allow_none=True, metadata={
        "description": "The refund address the invoice was committed with, shortened (`0x1234…abcd`)."})
    amount_received = AmountString(fiat=False, allow_none=True)                 # origin-asset units seen
    amount_remaining = AmountString(fiat=False, allow_none=True)                # what an underpaid one lacks
    refund = fields.Nested(BuyerRefundSchema, allow_none=True, metadata={
        "description": "The first of `refunds` (kept for older pages)."})
    refunds = fields.List(fields.Nested(BuyerRefundSchema), metadata={
        "description": "What went back to the buyer: one sum per asset and address."})
    paid_amount = AmountString(allow_none=True)
    exchange_rate = FixedRate()
    paid_at = UtcDateTime(allow_none=True)
    expires_at = UtcDateTime()
    return_url = fields.String(allow_none=True)
    checkout_url = fields.Function(lambda invoice: urls.checkout_url(invoice.public_id))


class QuoteSchema(Schema):
    """The swap provider's price for the invoice in one asset (the descriptions reach the API reference)."""

    origin_asset = fields.String(metadata={"description": "The asset the buyer pays in."})
    destination_asset = fields.String(metadata={"description": "The asset the merchant is paid out in."})
    amount_in = AmountString(fiat=False, metadata={"description": "What the buyer sends, in origin-asset units."})
    amount_out = AmountString(fiat=False,
                              metadata={"description": "What the merchant receives, in payout-asset units."})
    deposit_address = fields.String(allow_none=True,
                                    metadata={"description": "Where to send it; null on a dry quote."})
    deposit_memo = fields.String(allow_none=True, metadata={"description": "The memo the chain needs, if any."})
    deadline = UtcDateTime(metadata={"description": "The deposit must arrive before this."})
    time_estimate_seconds = fields.Integer(allow_none=True,
                                           metadata={"description": "How long the swap should take once paid."})


class PublicInvoiceViewSchema(PublicInvoiceSchema):
    """GET /v1/public/invoices/{id}: the buyer-safe invoice, and whether the sandbox runs (so the
    hosted page can offer "Simulate payment")."""

    sandbox = fields.Boolean()


class EstimatedRateSchema(Schema):
    """Today's rate, which a commit would fix (1 `from` = `rate` `to`)."""

    from_ = fields.String(data_key="from", attribute="from_currency")
    to = fields.String(attribute="to_currency")
    rate = RateString(metadata={"type": "string", "example": "1.0842"})
    source = fields.String()


class EstimateSchema(Schema):
    """A dry quote's terms, at today's rate: an estimate, fixed only by the commit (`dry: false`)."""

    estimate = fields.Constant(True, metadata={"type": "boolean", "description": "Always true: not yet fixed."})
    exchange_rate = fields.Nested(EstimatedRateSchema, attribute="rate", allow_none=True,
                                  metadata={"description": "Null at par."})
    payout_amount = AmountString(fiat=False, metadata={"description": "The merchant's payout at today's rate, "
                                                                      "in the payout asset."})
    fee_bps = fields.Integer()


class QuoteResultSchema(Schema):
    """POST /v1/public/invoices/{id}/quote: the invoice after the quote, and the quote itself
    (null when a committed quote already exists)."""

    invoice = fields.Nested(PublicInvoiceViewSchema)
    quote = fields.Nested(QuoteSchema, allow_none=True)
    estimate = fields.Nested(EstimateSchema, allow_none=True,
                             metadata={"description": "A dry quote's terms at today's rate; null on a commit, "
                                                      "whose fixed terms are on the invoice."})
    dry = fields.Boolean()
