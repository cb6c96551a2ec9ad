"""`settlement_day`: the settlement statement's daily roll-up, one row per store, UTC day and
invoice currency (docs/exports.md#the-settlement-statement). What adds to it is decided in
services/settlement_days.py, in the same transaction as the rows it sums."""
import peewee as pw

from models.base import BaseModel
from models.fields import AmountField
from models.stores import Store


class SettlementDay(BaseModel):
    store = pw.ForeignKeyField(Store, on_delete="CASCADE", index=False)
    day = pw.DateField()
    currency = pw.CharField(max_length=3)
    invoices_paid = pw.IntegerField(default=0)
    gross_paid = AmountField(default=0)
    received = AmountField(default=0)
    difference = AmountField(default=0)
    refunds = pw.IntegerField(default=0)
    refunded = AmountField(default=0)
    # The operator's fees of the invoices settled that day (0019). Zero by the column's own default, not
    # peewee's: an insert leaves the column out, so the roll-up also writes to a schema from before it.
    fees = AmountField(constraints=[pw.SQL("DEFAULT 0")])
    # The contributions summed here: the day has a statement row while it is above zero.
    movements = pw.IntegerField(default=0)

    class Meta:
        table_name = "settlement_day"
        primary_key = pw.CompositeKey("store", "day", "currency")
