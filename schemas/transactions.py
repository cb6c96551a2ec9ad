from marshmallow import Schema, fields, validate

from models.transactions import STATUSES, TYPES
from schemas.common import ListQuerySchema
from schemas.fields import AmountString, PublicId, UtcDateTime, UuidString, one_of


class TransactionListQuerySchema(ListQuerySchema):
    invoice_id = PublicId("inv_", load_default=None)
    payment_link_id = PublicId("plink_", load_default=None)
    customer_id = UuidString(load_default=None)
    type = fields.String(load_default=None, validate=validate.OneOf(TYPES))
    status = fields.String(load_default=None, validate=validate.OneOf(STATUSES))


class TransactionSchema(Schema):
    id = fields.Function(lambda txn: txn.public_id)
    invoice_id = fields.Function(lambda txn: txn.invoice.public_id)
    type = one_of(TYPES)
    # Joined (services/engine/transactions.py): the refund's id, or None on every other movement.
    refund_id = fields.Function(lambda txn: getattr(txn.refund, "public_id", None), allow_none=True,
                                metadata={"description": "On a `refund` that delivered a merchant refund: its "
                                                         "`ref_…` id; null otherwise."})
    network = fields.String(allow_none=True)
    token = fields.String()
    amount = AmountString(fiat=False)
    transaction_hash = fields.String()
    from_wallet = fields.String(allow_none=True)
    to_wallet = fields.String(allow_none=True)
    confirmations = fields.Integer(allow_none=True)
    status = one_of(STATUSES)
    verified = fields.Boolean()
    confirmed_at = UtcDateTime(allow_none=True)
    created_at = UtcDateTime()
    updated_at = UtcDateTime()
