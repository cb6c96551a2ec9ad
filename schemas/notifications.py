"""The store's notification mail settings (`/v1/store/notifications`, docs/email.md#what-is-sent-when)."""
from marshmallow import RAISE, Schema, fields, validate

from models.mail import MAX_RECIPIENTS, MERCHANT_KINDS
from schemas.fields import StrictBoolean

_KIND_DESCRIPTIONS = {
    "payment_received": "An invoice was paid (`invoice.paid`).",
    "invoice_underpaid": "An invoice received less than it asks for (`invoice.underpaid`).",
    "refund_awaiting_funds": "A refund was created and waits for the store to fund it.",
    "refund_funding_reminder": "A refund is still unfunded 30 minutes before its funding deadline.",
    "refund_succeeded": "A refund reached the buyer.",
    "refund_failed": "A refund could not be completed.",
    "endpoint_failing": "Every delivery to a webhook endpoint has failed for an hour.",
    "endpoint_disabled": "A webhook endpoint was disabled (3 days of failures, or a 410 Gone).",
}


def _kinds_schema(*, update: bool) -> type:
    """One boolean per kind: all present in an answer, any of them in an update."""
    booleans = {kind: StrictBoolean(required=not update,
                                 metadata={"description": _KIND_DESCRIPTIONS[kind]})
                for kind in MERCHANT_KINDS}
    return Schema.from_dict(booleans, name="NotificationKindsUpdate" if update else "NotificationKinds")


_Kinds, _KindsUpdate = _kinds_schema(update=False), _kinds_schema(update=True)
_KindsUpdate.Meta.unknown = RAISE


class NotificationSettingsSchema(Schema):
    recipients = fields.List(fields.String(), metadata={
        "description": f"Where the store's mail goes: up to {MAX_RECIPIENTS} addresses. Empty: no mail."})
    kinds = fields.Nested(_Kinds, metadata={"description": "Which kinds of mail the store wants."})


class NotificationSettingsUpdateSchema(Schema):
    class Meta:
        unknown = RAISE

    recipients = fields.List(fields.String(validate=validate.Length(max=254)),
                             validate=validate.Length(max=MAX_RECIPIENTS), metadata={
        "description": f"Replaces the list: up to {MAX_RECIPIENTS} e-mail addresses (`[]`: no mail at all)."})
    kinds = fields.Nested(_KindsUpdate, metadata={
        "description": "The kinds to turn on (`true`) or off (`false`); kinds left out keep their setting."})
