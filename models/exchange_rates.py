"""`exchange_rate`: the rates Tender may fix an invoice at, one row per source and currency (1 unit
of `currency` = `rate` US dollars). The sandbox's rows are the operator's (`flask rates set`); the
real sources' are written by the scheduler's refresh (services/engine/exchange_rates.py), so a buyer's
request only ever reads this table."""
import peewee as pw

from models.base import BaseModel
from models.fields import AmountField


class ExchangeRate(BaseModel):
    source = pw.CharField(max_length=32)
    currency = pw.CharField(max_length=3)
    rate = AmountField()
    as_of = pw.DateTimeField()            # when the source says the rate holds (its publication)
    fetched_at = pw.DateTimeField()       # when Tender read it (or the operator set it)

    class Meta:
        table_name = "exchange_rate"
        primary_key = pw.CompositeKey("source", "currency")
