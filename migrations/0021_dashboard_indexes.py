"""Indexes of the dashboard's pages at scale (bench/dashboard_pages.py, docs/indexes.md).

* `audit_entry (store_id, id)`: the audit log is paged newest first by id within one store. Without
  it the database walked the primary key backwards past every newer entry of every other store
  (20 ms for a neighbour's 20,000 entries, and growing with theirs).
* `refund (store_id, status, created_at, id)`: the refunds list's `?status=` filter, as for invoices;
  and the home page's count of refunds awaiting funds reads only those (a funding window closes
  within the hour), never the store's every refund, nor every store's refunds awaiting funds.
* `refund (store_id, created_at, id)` replaces `(store_id, created_at)`: the list's keyset order is
  `(created_at, id)`, which the old index could only give with a sort after it.
"""


def up(migrator, db):
    db.execute_sql("CREATE INDEX audit_entry_store_id_id ON audit_entry (store_id, id)")
    db.execute_sql("CREATE INDEX refund_store_id_status_created_at_id ON refund (store_id, status, created_at, id)")
    db.execute_sql("CREATE INDEX refund_store_id_created_at_id ON refund (store_id, created_at, id)")
    db.execute_sql("DROP INDEX refund_store_id_created_at")
