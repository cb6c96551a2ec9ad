"""Payment link request and response shapes (spec "Payment link", docs/payment-links.md)."""
from marshmallow import RAISE, Schema, ValidationError, fields, validate, validates_schema

from core import urls
from core.display_text import is_blank, spoofing_problem
from models.invoices import STATUSES as INVOICE_STATUSES
from models.payment_links import AMOUNT_MODES, STATUSES, USAGES
from schemas.common import ListQuerySchema
from schemas.fields import (AmountString, CurrencyCode, EmailAddress, StrictBoolean, StrictString, UtcDateTime,
                            one_of)

_AMOUNT_MODE = validate.OneOf(AMOUNT_MODES, error=f"must be one of {', '.join(AMOUNT_MODES)}")


class Title(StrictString):
    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        if is_blank(text):
            raise ValidationError("must not be blank")
        problem = spoofing_problem(text)
        if problem:
            raise ValidationError(problem)
        return text


_title = dict(validate=validate.Length(min=1, max=200, error="must be 1 to 200 characters"))


class PaymentLinkCreateSchema(Schema):
    class Meta:
        unknown = RAISE

    title = Title(required=True, **_title)
    amount_mode = fields.String(required=True, validate=_AMOUNT_MODE)
    amount = AmountString(allow_none=True)
    min_amount = AmountString(allow_none=True)
    max_amount = AmountString(allow_none=True)
    currency = CurrencyCode(load_default="USD")
    allow_multiple_payments = StrictBoolean(load_default=True)
    public_visible = StrictBoolean(load_default=True)


class PaymentLinkUpdateSchema(Schema):
    """Every field optional; only those sent change. Mode rules are checked in the service."""

    class Meta:
        unknown = RAISE

    title = Title(**_title)
    amount_mode = fields.String(validate=_AMOUNT_MODE)
    amount = AmountString(allow_none=True)
    min_amount = AmountString(allow_none=True)
    max_amount = AmountString(allow_none=True)
    allow_multiple_payments = StrictBoolean()
    public_visible = StrictBoolean()


class PaymentLinkListQuerySchema(ListQuerySchema):
    status = fields.String(load_default=None, validate=validate.OneOf(STATUSES))


class PaymentLinkSchema(Schema):
    """The merchant view."""

    id = fields.Function(lambda link: link.public_id)
    public_id = fields.Function(lambda link: link.plpub_id)
    public_url = fields.Function(lambda link: urls.payment_link_url(link.plpub_id))
    title = fields.String()
    amount_mode = one_of(AMOUNT_MODES)
    amount = AmountString(allow_none=True)
    min_amount = AmountString(allow_none=True)
    max_amount = AmountString(allow_none=True)
    currency = fields.String()
    allow_multiple_payments = fields.Boolean()
    public_visible = fields.Boolean()
    usage = fields.Function(lambda link: link.usage, metadata={"type": "string", "enum": list(USAGES)})
    status = one_of(STATUSES)
    created_at = UtcDateTime()
    updated_at = UtcDateTime()


class PaymentLinkPublicSchema(PaymentLinkSchema):
    """The buyer view: the merchant view's fields named in `Meta.fields` (an allowlist, in this
    order) and the store's name; never the store's ids, wallet, e-mail or webhooks. The link must be
    loaded with its store joined (services.payment_links.get_public does)."""

    class Meta:
        fields = ("public_id", "title", "amount_mode", "amount", "min_amount", "max_amount", "currency", "usage",
                  "status", "store_name", "merchant_name")

    store_name = fields.Function(lambda link: link.store.name)
    # A store has one name; the merchant's display name is that name until stores get a separate one.
    merchant_name = fields.Function(lambda link: link.store.name)


class PaymentLinkInvoiceSchema(Schema):
    """Invoice summary items of GET /v1/payment-links/{id}/invoices."""

    id = fields.Function(lambda invoice: invoice.public_id)
    status = one_of(INVOICE_STATUSES)
    amount = AmountString()
    currency = fields.String()
    paid_amount = AmountString(allow_none=True)
    created_at = UtcDateTime()
    paid_at = UtcDateTime(allow_none=True)


class CheckoutSchema(Schema):
    class Meta:
        unknown = RAISE

    amount = AmountString(load_default=None, allow_none=True)
    origin_asset = StrictString(load_default=None, allow_none=True, validate=validate.Length(min=1, max=64))
    refund_to = StrictString(load_default=None, allow_none=True, validate=validate.Length(min=1, max=256))
    customer_email = EmailAddress(load_default=None, allow_none=True, metadata={"description": "Optional: where the buyer wants the receipt of this payment (and a notice if it is refunded); kept when the merchant gave one already."})

    @validates_schema
    def _asset_and_refund_together(self, data, **kwargs):
        if data.get("origin_asset") is not None and data.get("refund_to") is None:
            raise ValidationError("is required with origin_asset", "refund_to")
        if data.get("refund_to") is not None and data.get("origin_asset") is None:
            raise ValidationError("is required with refund_to", "origin_asset")


class CheckoutResultSchema(Schema):
    invoice_id = fields.Function(lambda result: result.invoice.public_id)
    checkout_url = fields.Function(lambda result: urls.checkout_url(result.invoice.public_id))
    reused = fields.Boolean()
