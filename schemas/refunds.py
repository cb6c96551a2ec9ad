"""Merchant refund shapes (docs/refunds.md)."""
from marshmallow import RAISE, Schema, fields, validate

from core import networks, urls
from models.refunds import STATUSES
from schemas.common import ListQuerySchema
from schemas.fields import AmountString, PublicId, StrictString, UtcDateTime

FUND_OUTCOMES = ("success", "short", "failed")


class RefundCreateSchema(Schema):
    class Meta:
        unknown = RAISE

    amount = AmountString(required=True, metadata={"description": "In the invoice's currency; at most what "
                                                                  "the invoice still has to refund."})
    reason = StrictString(load_default=None, validate=validate.Length(min=1, max=500))
    asset = StrictString(load_default=None, validate=validate.Length(min=1, max=64),
                         metadata={"description": "What the buyer receives; default: the asset they paid with."})
    refund_to = StrictString(load_default=None, validate=validate.Length(min=1, max=256),
                             metadata={"description": "The buyer's address on the asset's network; default: "
                                                      "the refund address they gave at checkout."})


class RefundListQuerySchema(ListQuerySchema):
    invoice_id = PublicId("inv_", load_default=None)
    status = fields.String(load_default=None, validate=validate.OneOf(STATUSES))


class FundRefundSchema(Schema):
    """The sandbox helper: how the simulated funding deposit goes."""

    class Meta:
        unknown = RAISE

    outcome = fields.String(load_default="success", validate=validate.OneOf(FUND_OUTCOMES))
    amount = AmountString(fiat=False, load_default=None,
                          metadata={"description": "Units of the funding asset sent; default: what `outcome` "
                                                   "implies (the funding amount, or half of it when short)."})


class FundingSchema(Schema):
    """What the merchant sends, where, and what reached the address."""

    asset = fields.String(attribute="funding_asset", metadata={"description": "The store's payout asset."})
    amount = AmountString(fiat=False, attribute="funding_amount",
                          metadata={"description": "Send exactly this much of `asset`."})
    deposit_address = fields.String()
    deposit_memo = fields.String(allow_none=True, metadata={"description": "Send it with the transfer where "
                                                                             "not null."})
    expires_at = UtcDateTime(metadata={"description": "The funding must arrive before this."})
    received_amount = AmountString(fiat=False, attribute="funded_amount", allow_none=True,
                                   metadata={"description": "What reached the address, once the provider saw it."})
    transaction_hash = fields.String(attribute="funding_tx_hash", allow_none=True)
    returned_amount = AmountString(fiat=False, allow_none=True,
                                   metadata={"description": "What the provider sent back to the payout wallet "
                                                            "(a failed refund swap, late funding, an excess)."})
    return_transaction_hash = fields.String(attribute="return_tx_hash", allow_none=True)


class _Whole(fields.Nested):
    """A nested object read from the same row (the refund's funding columns, grouped)."""

    def get_value(self, obj, attr, accessor=None, default=None):
        return obj


def _funding_url(refund):
    return urls.refund_funding_url(refund.public_id)


class RecipientSchema(Schema):
    """Who receives the refund, as the merchant checks it before funding: the asset and the buyer's
    address, shortened (first six and last four characters)."""

    asset = fields.String(metadata={"description": "The asset the buyer receives."})
    address = fields.Function(lambda refund: networks.shortened(refund.refund_to), metadata={
        "description": "The buyer's address, shortened: `0x1234…abcd`."})


class RefundSchema(Schema):
    """A refund as GET /v1/refunds/{id} returns it, and as `refund.*` events carry it."""

    id = fields.Function(lambda refund: refund.public_id)
    invoice_id = fields.Function(lambda refund: refund.invoice.public_id)
    status = fields.String(validate=validate.OneOf(STATUSES))
    amount = AmountString(metadata={"description": "In the invoice's currency."})
    currency = fields.String()
    reason = fields.String(allow_none=True)
    asset = fields.String(metadata={"description": "The asset the buyer receives."})
    refund_to = fields.String(metadata={"description": "The buyer's address that receives it."})
    estimated_amount_out = AmountString(fiat=False, metadata={
        "description": "What the buyer should receive, in `asset` units, as quoted (the swap fee deducted)."})
    amount_out = AmountString(fiat=False, attribute="delivered_amount", allow_none=True,
                              metadata={"description": "What the provider delivered to `refund_to`; null until "
                                                       "it succeeded."})
    transaction_hash = fields.String(allow_none=True, metadata={"description": "The delivery to the buyer."})
    failure_reason = fields.String(allow_none=True, metadata={
        "description": "`funding_returned` (the provider sent the funding back to the payout wallet) or "
                       "`provider_failed`; null unless failed."})
    recipient = _Whole(RecipientSchema, metadata={"description": "Who receives it, as the funding page shows it."})
    funding = _Whole(FundingSchema)
    funding_url = fields.Function(_funding_url)
    created_at = UtcDateTime()
    updated_at = UtcDateTime()
    completed_at = UtcDateTime(allow_none=True, metadata={"description": "When it succeeded or failed."})


class PublicRefundSchema(Schema):
    """What the funding page shows: who receives it (the asset and a shortened address, for the
    merchant to check), never the whole buyer address, the reason or metadata."""

    id = fields.Function(lambda refund: refund.public_id)
    status = fields.String(validate=validate.OneOf(STATUSES))
    amount = AmountString()
    currency = fields.String()
    store_name = fields.Function(lambda refund: refund.store.name)
    recipient = _Whole(RecipientSchema)
    funding = _Whole(FundingSchema)
