"""Asset decimals recorded when a quote is committed (issue 19).

`invoice.origin_decimals` / `destination_decimals`: the decimals of the quoted assets, so that
reading a deposit's status converts the provider's smallest units without the current token list
(an asset delisted after the buyer committed must not stop the invoice from being paid).
"""
import peewee as pw


def up(migrator, db):
    migrator.migrate(
        migrator.add_column("invoice", "origin_decimals", pw.SmallIntegerField(null=True)),
        migrator.add_column("invoice", "destination_decimals", pw.SmallIntegerField(null=True)),
    )
