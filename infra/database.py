"""Where PostgreSQL and SQLite differ, one function per difference, each backend's way beside the
other's; the rooms above call these and never ask which database they are on.

Each function is tested on both backends in one test (tests/infra/test_database.py): SQLite on a
file of its own, PostgreSQL with TEST_DATABASE_URL.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Iterator
import uuid

import peewee as pw

from models.base import db


def _on_postgres(database) -> bool:
    return isinstance(database, pw.PostgresqlDatabase)


def _database(database):
    return database if database is not None else db.obj


# --- Reading a large result a batch at a time -------------------------------------------------

def stream_rows(sql: str, params, *, size: int, database=None) -> Iterator[list[tuple]]:
    """The rows of `sql` as the driver returns them, `size` at a time, never all in memory."""
    database = _database(database)
    if _on_postgres(database):
        return _stream_rows_postgres(database, sql, params, size)
    return _stream_rows_sqlite(database, sql, params, size)


def _stream_rows_postgres(database, sql, params, size):
    # A named (server-side) cursor, which psycopg2 allows only inside a transaction: the connection
    # leaves autocommit for the read and is rolled back and restored after.
    connection = database.connection()
    connection.autocommit = False
    try:
        with connection.cursor(name=f"stream_{uuid.uuid4().hex}") as cursor:
            cursor.itersize = size
            cursor.execute(sql, params)
            while rows := cursor.fetchmany(size):
                yield rows
    finally:
        connection.rollback()
        connection.autocommit = True


def _stream_rows_sqlite(database, sql, params, size):
    # SQLite steps through the result as it is fetched: a plain cursor already streams.
    cursor = database.execute_sql(sql, params)
    while rows := cursor.fetchmany(size):
        yield rows


# --- Summing amounts exactly ----------------------------------------------------------------------

def exact_sum(database=None) -> str:
    """The name of an SQL aggregate that sums amount columns exactly (never through float), for
    this connection: PostgreSQL's SUM over NUMERIC; on SQLite, where amounts are stored as text,
    `decimal_sum`, registered here."""
    database = _database(database)
    if _on_postgres(database):
        return "SUM"
    database.register_aggregate(_DecimalSum, "decimal_sum", 1)
    return "decimal_sum"


class _DecimalSum:
    """SQLite's SUM would go through float; this adds the text amounts as Decimal."""

    def __init__(self):
        self.total = None

    def step(self, value):
        if value is not None:
            self.total = (self.total or Decimal(0)) + Decimal(str(value))

    def finalize(self):
        return None if self.total is None else str(self.total)
