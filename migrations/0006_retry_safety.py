"""Every request safe to retry (issue 18).

* `idempotency_key.scope`: a key is unique within (store, scope, key). Merchant routes use the
  empty scope (a key per store); the buyer routes scope it to their object and the client, so two
  buyers of one store never share a key.
* `api_key.consumed_for`: the site a bootstrap key connected, so a connect retried after its
  response was lost can reconnect that site (and only that one) for a short while.
"""
import peewee as pw


def up(migrator, db):
    migrator.migrate(
        migrator.add_column("idempotency_key", "scope", pw.CharField(max_length=128, default="")),
        migrator.drop_index("idempotency_key", "idempotency_key_store_id_key"),
        migrator.add_index("idempotency_key", ("store_id", "scope", "key"), True),
        migrator.add_column("api_key", "consumed_for", pw.TextField(null=True)),
    )
