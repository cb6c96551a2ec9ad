"""Webhook delivery claims read by an index of their own (issue 25).

A delivery run reads back the deliveries it claimed by their `claim_token`, and every claim counts
the attempts in flight (claimed rows) per endpoint and store. Without an index both scanned the
whole `webhook_delivery` table, which only grows. The index holds only the rows claimed right now,
so it stays as small as the work in flight.
"""


def up(migrator, db):
    db.execute_sql("CREATE INDEX webhook_delivery_claimed ON webhook_delivery (claim_token) "
                   "WHERE claim_token IS NOT NULL")

