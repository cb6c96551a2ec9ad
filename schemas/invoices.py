"""Invoice request and response shapes."""
from marshmallow import RAISE, Schema, fields, validate

from core import urls
from models.invoices import STATUSES
from schemas.common import ListQuerySchema
from schemas.fields import (AmountString, CurrencyCode, EmailAddress, FixedRate, HttpUrl, Metadata, PublicId,
                            StrictString, UtcDateTime, UuidString, one_of)

_PAYOUT = {"description": "What the merchant is owed in `output_asset` units, at the rate fixed when the buyer "
                          "committed (at par: the amount); null before the commit."}
_FEE_BPS = {"description": "The operator's fee in basis points, fixed at the commit; null before it."}
_FEE_AMOUNT = {"description": "The operator's fee in the invoice currency; null before the commit and when "
                              "there is none."}


class InvoiceCreateSchema(Schema):
    class Meta:
        unknown = RAISE

    amount = AmountString(required=True)
    currency = CurrencyCode(load_default="USD")
    order_amount = AmountString(load_default=None, currency="order_currency")
    order_currency = CurrencyCode(load_default=None)
    external_order_id = StrictString(load_default=None, validate=validate.Length(min=1, max=128))
    store_id = fields.String(load_default=None, validate=validate.Length(max=64))
    customer_id = UuidString(load_default=None)
    customer_email = EmailAddress(load_default=None, allow_none=True, metadata={"description": "The buyer's e-mail address: Tender mails them a receipt when the invoice is paid and a notice when a refund is sent, nothing else (docs/email.md)."})
    callback_url = HttpUrl(https_only=True, load_default=None)
    return_url = HttpUrl(load_default=None)
    metadata = Metadata(load_default=None)


class InvoiceListQuerySchema(ListQuerySchema):
    status = fields.String(load_default=None, validate=validate.OneOf(STATUSES))
    external_order_id = fields.String(load_default=None, validate=validate.Length(min=1, max=128))
    customer_id = UuidString(load_default=None)
    payment_link_id = PublicId("plink_", load_default=None)
    created_after = UtcDateTime(load_default=None)
    created_before = UtcDateTime(load_default=None)
    paid_after = UtcDateTime(load_default=None)
    paid_before = UtcDateTime(load_default=None)


def _checkout_url(invoice):
    return urls.checkout_url(invoice.public_id)


class InvoiceSchema(Schema):
    """The invoice as GET /v1/invoices/{id} returns it, and as events carry it."""

    id = fields.Function(lambda invoice: invoice.public_id)
    external_order_id = fields.String(allow_none=True)
    status = one_of(STATUSES)
    amount = AmountString()
    currency = fields.String()
    order_amount = AmountString(currency="order_currency")
    order_currency = fields.String()
    paid_amount = AmountString(allow_none=True)
    refunded_amount = AmountString(allow_none=True, metadata={
        "description": "What the merchant's refunds of it returned so far (docs/refunds.md); null before the first."})
    output_asset = fields.String()
    exchange_rate = FixedRate()
    payout_amount = AmountString(fiat=False, allow_none=True, metadata=_PAYOUT)
    fee_bps = fields.Integer(allow_none=True, metadata=_FEE_BPS)
    fee_amount = AmountString(allow_none=True, metadata=_FEE_AMOUNT)
    checkout_url = fields.Function(_checkout_url)
    payment_url = fields.Function(_checkout_url)
    return_url = fields.String(allow_none=True)
    customer_id = UuidString(allow_none=True)
    payment_link_id = fields.String(allow_none=True)
    transaction_hash = fields.String(allow_none=True)
    metadata = fields.Dict(allow_none=True)
    created_at = UtcDateTime()
    updated_at = UtcDateTime()
    paid_at = UtcDateTime(allow_none=True)
    expires_at = UtcDateTime()


class InvoiceCreatedSchema(Schema):
    """The create response carries exactly these fields (spec: Invoice)."""

    id = fields.Function(lambda invoice: invoice.public_id)
    status = one_of(STATUSES)
    checkout_url = fields.Function(_checkout_url)
    payment_url = fields.Function(_checkout_url)
    amount = AmountString()
    currency = fields.String()
    output_asset = fields.String()
    expires_at = UtcDateTime()


class InvoiceStatusPollSchema(Schema):
    """The poll object of GET /v1/invoices/{id}/status."""

    id = fields.Function(lambda invoice: invoice.public_id)
    status = one_of(STATUSES)
    swap_status = fields.String(allow_none=True)
    paid_amount = AmountString(allow_none=True)
    received_amount = AmountString(allow_none=True)
    difference_amount = AmountString(allow_none=True, signed=True)       # negative when fees were taken
    exchange_rate = FixedRate()
    payout_amount = AmountString(fiat=False, allow_none=True, metadata=_PAYOUT)
    fee_bps = fields.Integer(allow_none=True, metadata=_FEE_BPS)
    fee_amount = AmountString(allow_none=True, metadata=_FEE_AMOUNT)
    transaction_hash = fields.String(allow_none=True)
    paid_at = UtcDateTime(allow_none=True)
    deposit_address = fields.String(allow_none=True)
    deposit_memo = fields.String(allow_none=True)
    return_url = fields.String(allow_none=True)

