"""When each API key was last used, for the dashboard's API keys page.

* `api_key.last_used_at`: the time of a request the key authenticated, to the minute: authenticating
  writes it at most once a minute per key (services/accounts/api_keys.py, docs/decisions.md). Null
  for a key never used since this column came.
"""
import peewee as pw


def up(migrator, db):
    migrator.migrate(migrator.add_column("api_key", "last_used_at", pw.DateTimeField(null=True)))
