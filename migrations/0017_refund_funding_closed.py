"""When a refund's funding window closed with no funding (issue 36: a refund paid out twice).

`refund.funding_closed_at`: set once the provider, asked after the funding deadline, knew of no
funding (the expiry sweep's question). Until then a cancelled refund keeps its amount: funding that
crosses the cancel is still swapped and delivered by the provider.
"""
import peewee as pw


def up(migrator, db):
    migrator.migrate(migrator.add_column("refund", "funding_closed_at", pw.DateTimeField(null=True)))
    # Expired refunds were expired by that very question; cancelled ones past their deadline are
    # asked again by the next sweep.
    db.execute_sql("UPDATE refund SET funding_closed_at = updated_at WHERE status = 'expired'")
