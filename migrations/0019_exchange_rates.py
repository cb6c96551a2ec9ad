"""Money in the merchant's own currency, and the operator's fee (issue 37).

* `exchange_rate`: the rates an invoice may be fixed at, per source and currency (1 unit = `rate`
  US dollars), with the sandbox's starter table: the sandbox prices these currencies out of the box,
  and an operator changes them with `flask --app wsgi rates set`. They are simulated money's rates,
  read only when FX_PROVIDER is `sandbox`.
* On the invoice, what its buyer's commit fixed: the rate, its source and time, the payout owed in
  the output asset, and the operator's fee (its basis points and its amount in the invoice currency).
* `store.fee_bps`: a store's own fee, when the operator set one (`flask --app wsgi stores set-fee`).
* `settlement_day.fees`: the settlement statement's sum of fees.
"""
import datetime as dt
from decimal import Decimal

import peewee as pw

from models.fields import AmountField

STARTER_RATES = {"EUR": "1.0842", "GBP": "1.2710", "CHF": "1.1320", "CAD": "0.7150", "AUD": "0.6540",
                 "JPY": "0.006650", "SGD": "0.7480", "BRL": "0.1720", "MXN": "0.0545"}


def up(migrator, db):
    class ExchangeRate(pw.Model):
        source = pw.CharField(max_length=32)
        currency = pw.CharField(max_length=3)
        rate = AmountField()
        as_of = pw.DateTimeField()
        fetched_at = pw.DateTimeField()

        class Meta:
            database = db
            table_name = "exchange_rate"
            primary_key = pw.CompositeKey("source", "currency")

    db.create_tables([ExchangeRate])
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None, microsecond=0)
    ExchangeRate.insert_many([{"source": "sandbox", "currency": code, "rate": Decimal(rate), "as_of": now,
                               "fetched_at": now} for code, rate in STARTER_RATES.items()]).execute()
    migrator.migrate(
        migrator.add_column("invoice", "exchange_rate", AmountField(null=True)),
        migrator.add_column("invoice", "exchange_rate_source", pw.CharField(max_length=32, null=True)),
        migrator.add_column("invoice", "exchange_rate_fixed_at", pw.DateTimeField(null=True)),
        migrator.add_column("invoice", "payout_amount", AmountField(null=True)),
        migrator.add_column("invoice", "fee_bps", pw.SmallIntegerField(null=True)),
        migrator.add_column("invoice", "fee_amount", AmountField(null=True)),
        migrator.add_column("store", "fee_bps", pw.SmallIntegerField(null=True)),
        migrator.add_column("settlement_day", "fees", AmountField(default=0, constraints=[pw.SQL("DEFAULT 0")])),
    )
