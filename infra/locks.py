"""Row locks for read-decide-write sections, behind one helper (STYLE anti-pattern 8)."""
from __future__ import annotations

from infra.database import on_postgres
from models.base import db


def lock_row(model, row_id):
    """Re-read the row `row_id` of `model` and hold it until the current transaction ends.

    Call inside `db.atomic()`. PostgreSQL: `SELECT … FOR UPDATE`, so a second transaction that
    locks the same row waits for the first to commit, then reads what it wrote. SQLite has no row
    locks (peewee's `for_update()` raises there) and serialises writers on the whole database;
    a no-op UPDATE takes that write lock now rather than at the first real write, so a concurrent
    writer waits here instead of failing later on a stale read (SQLITE_BUSY_SNAPSHOT in WAL mode).
    """
    if on_postgres():
        return model.select().where(model.id == row_id).for_update().get()
    model.update({model.id: model.id}).where(model.id == row_id).execute()
    return model.get_by_id(row_id)


def write_transaction():
    """A transaction that holds the database's write lock from its first statement on SQLite
    (BEGIN IMMEDIATE), so a read-then-update claim cannot interleave with another writer; on
    PostgreSQL an ordinary transaction, whose row locks do that job."""
    return db.atomic() if on_postgres() else db.atomic(lock_type="IMMEDIATE")
