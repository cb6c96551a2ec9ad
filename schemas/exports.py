"""Query shapes of the exports and the settlement statement (docs/exports.md)."""
import datetime as dt

from marshmallow import RAISE, Schema, ValidationError, fields, validate, validates_schema

from schemas.fields import UtcDateTime
from schemas.invoices import InvoiceListQuerySchema
from schemas.transactions import TransactionListQuerySchema

MAX_RANGE = dt.timedelta(days=366)
# The statement runs to the midnight after `to`, which the calendar's last day does not have.
LAST_STATEMENT_DAY = dt.date.max - dt.timedelta(days=1)
FORMATS = ("csv", "jsonl")


def check_range(data: dict, start: str, end: str) -> None:
    """Both ends given, start before end, at most 366 days: an export or a statement is bounded."""
    for name in (start, end):
        if data.get(name) is None:
            raise ValidationError("is required", name)
    if data[end] <= data[start]:
        raise ValidationError(f"must be after {start}", end)
    if data[end] - data[start] > MAX_RANGE:
        raise ValidationError(f"the range may cover at most {MAX_RANGE.days} days", end)


class _ExportQuery:
    """The list route's filters without its paging, plus `format`; `created_after` and
    `created_before` are required."""

    format = fields.String(load_default="csv", validate=validate.OneOf(FORMATS))

    @validates_schema
    def _bounded(self, data, **kwargs):
        check_range(data, "created_after", "created_before")


class InvoiceExportQuerySchema(_ExportQuery, InvoiceListQuerySchema):
    class Meta:
        unknown = RAISE
        exclude = ("limit", "starting_after", "ending_before")


class TransactionExportQuerySchema(_ExportQuery, TransactionListQuerySchema):
    class Meta:
        unknown = RAISE
        exclude = ("limit", "starting_after", "ending_before")

    created_after = UtcDateTime(load_default=None)
    created_before = UtcDateTime(load_default=None)


class SettlementReportQuerySchema(Schema):
    """`from`/`to` are UTC dates (`2026-11-01`); `to` is inclusive."""

    class Meta:
        unknown = RAISE

    from_ = fields.Date(data_key="from", required=True)
    to = fields.Date(required=True, validate=validate.Range(
        max=LAST_STATEMENT_DAY, error=f"must be on or before {LAST_STATEMENT_DAY.isoformat()}"))

    @validates_schema
    def _bounded(self, data, **kwargs):
        if data["to"] < data["from_"]:
            raise ValidationError("must be on or after from", "to")
        if data["to"] - data["from_"] >= MAX_RANGE:
            raise ValidationError(f"the statement may cover at most {MAX_RANGE.days} days", "to")


class SettlementDaySchema(Schema):
    """One UTC day and invoice currency of the statement; amounts in that currency."""

    date = fields.String(metadata={"format": "date", "example": "2026-11-23"})
    currency = fields.String()
    invoices_paid = fields.Integer(metadata={"description": "Invoices that moved to paid that day."})
    gross_paid = fields.String(metadata={"description": "Sum of their paid_amount.", "example": "1250.00"})
    received = fields.String(metadata={"description": "Sum of the settlement transactions recorded that day "
                                                      "(the payout asset delivered, in its units).",
                                       "example": "1243.75"})
    difference = fields.String(metadata={"description": "Sum of those settled invoices' difference_amount "
                                                        "(negative when fees were taken).", "example": "-6.25"})
    refunds = fields.Integer(metadata={"description": "Refund transactions recorded that day."})
    refunded = fields.String(metadata={"description": "Sum of the merchant refunds delivered that day, in the "
                                                      "invoice currency (the transactions export's `refund_amount`).",
                                       "example": "15.00"})
    processing = fields.Integer(metadata={"description": "Invoices paid that day still converting now."})
    held_for_review = fields.Integer(metadata={"description": "Invoices paid that day held for review now."})
    fees = fields.String(metadata={"description": "Sum of the operator's fees (`fee_amount`) of the invoices "
                                                  "settled that day.", "example": "12.50"})


class SettlementStatementSchema(Schema):
    from_ = fields.Date(data_key="from")
    to = fields.Date()
    data = fields.List(fields.Nested(SettlementDaySchema))
