"""When a connect's lost-response retry is over (issue 26).

* `api_key.first_used_at`: the first request a dedicated integration key authenticated. A
  bootstrap key's retry may replace the credentials its connect issued only while they are unseen.
* `api_key.issued_by`: the bootstrap key whose connect issued this integration key, so a retry
  replaces only its own connect's credentials, never those of a later reconnect.
"""
import peewee as pw


def up(migrator, db):
    migrator.migrate(
        migrator.add_column("api_key", "first_used_at", pw.DateTimeField(null=True)),
        migrator.add_column("api_key", "issued_by", pw.CharField(max_length=40, null=True)),
    )
