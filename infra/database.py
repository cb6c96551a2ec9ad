"""Where PostgreSQL and SQLite differ, one function per difference, each backend's way beside the
other's; the rooms above call these and never ask which database they are on.

Each function is tested on both backends in one test (tests/infra/test_database.py): SQLite on a
file of its own, PostgreSQL with TEST_DATABASE_URL.
"""
from __future__ import annotations

import contextlib
import decimal
from decimal import Decimal
import queue
import threading
from typing import Callable, Iterator
import uuid

import peewee as pw

from models import inserts
from models.base import db, replace_connection


def on_postgres(database=None) -> bool:
    """Whether `database` (by default the application's) is PostgreSQL: the one question each
    difference below asks, and the only way anything in infra/ asks it."""
    return isinstance(_database(database), pw.PostgresqlDatabase)


def for_this_database(*, postgres, sqlite, database=None):
    """`postgres` or `sqlite`, whichever is the database's own way: for a room above that writes
    each backend's way itself (the delivery claim's two SQL texts) without asking which it is on."""
    return postgres if on_postgres(database) else sqlite


def _database(database):
    return database if database is not None else db.obj


# --- Reading a large result a batch at a time -------------------------------------------------

def stream_rows(sql: str, params, *, size: int, database=None) -> Iterator[list[tuple]]:
    """The rows of `sql` as the driver returns them, `size` at a time, never all in memory."""
    database = _database(database)
    if on_postgres(database):
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


def value_parser(field: pw.Field, database=None) -> Callable | None:
    """What turns a value of `field` as the driver returns it into the field's Python value, or None
    when the driver already did: psycopg2 parses timestamps (and its UUID text needs no parsing);
    SQLite hands back the stored text of dates and UUIDs, which the field parses."""
    if on_postgres(database):
        return None
    return field.python_value


# --- Writing a query's rows as a file -------------------------------------------------------------

def file_chunks(written_by_server: Callable[[], Iterator[bytes]],
                written_here: Callable[[], Iterator[bytes]], *, database=None) -> Iterator[bytes]:
    """A file of rows, piece by piece. PostgreSQL writes it (`written_by_server`, which uses
    `copy_out`): converting every cell in Python was six times slower than `COPY`. SQLite has no
    `COPY`: `written_here` converts the rows in Python."""
    if on_postgres(database):
        return written_by_server()
    return written_here()


class _CopyCancelled(Exception):
    pass


class _CopyPieces:
    """What `copy_out`'s COPY writes to: each row through `finish_row`, put on `pieces` about
    `piece_bytes` at a time; a write after `stop` cancels the COPY."""

    def __init__(self, pieces: queue.Queue, stop: threading.Event, finish_row, piece_bytes: int):
        self.pieces, self.stop, self.finish_row, self.piece_bytes = pieces, stop, finish_row, piece_bytes
        self.rows, self.size = [], 0

    def write(self, row: bytes) -> None:
        if self.stop.is_set():
            raise _CopyCancelled()
        self.rows.append(self.finish_row(row))
        self.size += len(row)
        if self.size >= self.piece_bytes:
            self.flush()

    def flush(self) -> None:
        if self.rows:
            self.pieces.put(b"".join(self.rows))
            self.rows, self.size = [], 0


def copy_out(query, copy_format: str, finish_row, *, piece_bytes: int = 64 * 1024,
             pieces_ahead: int = 4, database=None) -> Iterator[bytes]:
    """PostgreSQL only: the rows of `COPY (query) TO STDOUT`, each passed through `finish_row`, in
    pieces of about `piece_bytes`. The COPY runs in a helper thread on this thread's connection
    (which waits meanwhile) and hands pieces over a queue of `pieces_ahead`: memory stays constant
    whatever the row count. PostgreSQL sends one message per row and psycopg2 writes each as it
    comes, so `finish_row` sees exactly one row. A reader that goes away stops the COPY, and the
    connection, left mid-protocol, is replaced by a fresh one instead of going back to the pool."""
    database = _database(database)
    connection = database.connection()
    with connection.cursor() as cursor:
        statement = cursor.mogrify(*query.sql()).decode()
    pieces: queue.Queue = queue.Queue(maxsize=pieces_ahead)
    stop = threading.Event()
    finished = object()

    def copy() -> None:
        out = _CopyPieces(pieces, stop, finish_row, piece_bytes)
        try:
            with connection.cursor() as cursor:
                cursor.copy_expert(f"COPY ({statement}) TO STDOUT WITH (FORMAT {copy_format})", out)
            out.flush()
            pieces.put(finished)
        except BaseException as error:      # handed to the reader, who raises it in the request
            pieces.put(error)

    worker = threading.Thread(target=copy, name="export-copy", daemon=True)
    worker.start()
    completed = False
    try:
        while (piece := pieces.get()) is not finished:
            if isinstance(piece, BaseException):
                raise piece
            yield piece
        completed = True
    finally:
        if not completed:
            stop.set()
            while worker.is_alive():         # unblock a writer waiting on a full queue
                try:
                    pieces.get(timeout=0.1)
                except queue.Empty:
                    pass
            if database is db.obj:
                replace_connection()
            else:
                database.close()
        worker.join()


# --- Compare-and-set on many rows at once ---------------------------------------------------------

def compare_and_set_each(model, guard: pw.Field, rows: list[tuple[object, object, dict]], *, same: dict,
                         keep_if_none: tuple[str, ...] = (), insert: tuple[type, dict] | None = None,
                         database=None) -> set:
    """For each `(id, expected, changes)`: set `changes` and `same` on the row of `model` with that
    id where `guard` still holds `expected`; the ids of the rows written. Every row sets the same
    columns, except those named in `keep_if_none`, which a row leaves as they are by giving None
    (or leaving them out). With `insert=(other_model, {id: new_row})`, each id written also gets
    its new row of `other_model` (fields by name, as `models.inserts.insert_rows` takes them), and
    no id that was not written does.

    All of it or nothing is written, inside the caller's transaction or without one: on
    PostgreSQL it is one statement, `UPDATE … FROM (VALUES …)` (one statement a row was the
    sustained webhook run's bottleneck), the INSERT of the new rows joined to what it returned in
    the same statement; SQLite writes one compare-and-set a row, then the INSERT, in a transaction
    (the caller's, when one is open)."""
    if not rows:
        return set()
    database = _database(database)
    if on_postgres(database):
        return _compare_and_set_each_postgres(database, model, guard, rows, same, keep_if_none, insert)
    return _compare_and_set_each_sqlite(database, model, guard, rows, same, keep_if_none, insert)


def _compare_and_set_each_postgres(database, model, guard, rows, same, keep_if_none, insert):
    fields, key = model._meta.fields, model._meta.primary_key
    names = list(dict.fromkeys(name for _, _, changes in rows for name in changes))
    values = [f'"v{index}"' for index in range(len(names) + 2)]
    assignments = [f'"{fields[name].column_name}" = '
                   + (f'COALESCE({value}, d."{fields[name].column_name}")' if name in keep_if_none else value)
                   for name, value in zip(names, values[2:])]
    assignments += [f'"{fields[name].column_name}" = %s' for name in same]
    params = [fields[name].db_value(value) for name, value in same.items()]
    for identifier, expected, changes in rows:
        params += [key.db_value(identifier), guard.db_value(expected)]
        params += [fields[name].db_value(changes.get(name)) for name in names]
    sql = (f'UPDATE "{model._meta.table_name}" AS d SET {", ".join(assignments)} '
           f'FROM {_typed_values(database, [key, guard] + [fields[name] for name in names], len(rows))} '
           f'AS v({", ".join(values)}) '
           f'WHERE d."{key.column_name}" = v."v0" AND d."{guard.column_name}" = v."v1" '
           f'RETURNING d."{key.column_name}"')
    if insert is not None and insert[1]:
        # A data-modifying WITH runs to completion whether or not the outer SELECT reads it.
        insert_sql, insert_params = _insert_where_written(database, key, *insert)
        sql = f'WITH written AS ({sql}), inserted AS ({insert_sql}) SELECT "{key.column_name}" FROM written'
        params += insert_params
    return {key.python_value(row[0]) for row in database.execute_sql(sql, params).fetchall()}


def _insert_where_written(database, key, model, new_rows_by_id):
    """The INSERT of `model`'s new rows whose id (`key`) is among those the WITH `written` returned."""
    columns, datas = inserts.new_rows(model, list(new_rows_by_id.values()))
    params = []
    for identifier, data in zip(new_rows_by_id, datas):
        params += [key.db_value(identifier)] + [field.db_value(data[field.name]) for field in columns]
    names = [f'"{field.column_name}"' for field in columns]
    sql = (f'INSERT INTO "{model._meta.table_name}" ({", ".join(names)}) '
           f'SELECT {", ".join("n." + name for name in names)} '
           f'FROM {_typed_values(database, [key] + columns, len(datas))} AS n("written id", {", ".join(names)}) '
           f'JOIN written ON written."{key.column_name}" = n."written id"')
    return sql, params


def _typed_values(database, fields: list[pw.Field], count: int) -> str:
    """`VALUES (…), …` of `count` rows of `fields`, each parameter cast to its column's type (an
    all-NULL column would otherwise be text)."""
    types = database.get_context_options()["field_types"]
    row = "(" + ", ".join(f"%s::{types.get(field.field_type, field.field_type)}" for field in fields) + ")"
    return f'(VALUES {", ".join([row] * count)})'


def _compare_and_set_each_sqlite(database, model, guard, rows, same, keep_if_none, insert):
    key, written = model._meta.primary_key, set()
    with database.transaction():        # the caller's, when one is open
        for identifier, expected, changes in rows:
            changes = {name: value for name, value in changes.items()
                       if not (name in keep_if_none and value is None)}
            if model.update(**changes, **same).where((key == identifier) & (guard == expected)).execute():
                written.add(identifier)
        if insert is not None:
            other, new_rows_by_id = insert
            inserts.insert_rows(other, [row for identifier, row in new_rows_by_id.items() if identifier in written])
    return written


# --- Adding to a row of running totals -----------------------------------------------------------

def add_to_row(model, key: dict, amounts: dict, *, database=None) -> None:
    """Add `amounts` (field name -> number, negative to take back) to the row of `model` whose
    primary key is `key`, created at zero first when missing. One upsert on both backends, so two
    transactions adding to the same row take turns and neither addition is lost; they differ only in
    how an amount is added."""
    database = _database(database)
    if on_postgres(database):
        additions = _additions_postgres(model, amounts)
    else:
        additions = _additions_sqlite(database, model, amounts)
    conflict = [model._meta.fields[name] for name in key]
    database.execute(model.insert({**key, **amounts}).on_conflict(conflict_target=conflict, update=additions))


def _additions_postgres(model, amounts):
    # NUMERIC adds exactly.
    fields = model._meta.fields
    return {fields[name]: fields[name] + getattr(pw.EXCLUDED, fields[name].column_name) for name in amounts}


def _additions_sqlite(database, model, amounts):
    # Amounts are text on SQLite, which `+` would turn into float: `decimal_add` adds them as Decimal.
    _register_decimal_add(database)
    fields, additions = model._meta.fields, {}
    for name in amounts:
        field, added = fields[name], getattr(pw.EXCLUDED, fields[name].column_name)
        additions[field] = pw.fn.decimal_add(field, added) if isinstance(field, pw.DecimalField) else field + added
    return additions


def _register_decimal_add(database) -> None:
    # Every time, as `exact_sum` does: it loads the function into this thread's open connection too
    # (once registered, peewee gives it only to the connections opened after).
    database.register_function(_decimal_add, "decimal_add", 2, deterministic=True)


# Wide enough for any two NUMERIC(36, 18) amounts: the default 28 digits would round their sum.
_EXACT = decimal.Context(prec=80)


def _decimal_add(left, right):
    if left is None or right is None:
        return None
    return str(_EXACT.add(Decimal(str(left)), Decimal(str(right))))


def sole_writer_of(model, *, database=None):
    """A transaction in which no one else writes to `model`'s table until it ends, while readers
    go on (for summing a table's rows again from others). PostgreSQL: `LOCK TABLE … IN SHARE ROW
    EXCLUSIVE MODE`, which waits for writers already in and holds back new ones. SQLite: its
    write lock, taken at BEGIN (IMMEDIATE), which holds back every writer of the database."""
    database = _database(database)
    if on_postgres(database):
        return _sole_writer_postgres(database, model)
    return _sole_writer_sqlite(database)


@contextlib.contextmanager
def _sole_writer_postgres(database, model):
    with database.atomic():
        database.execute_sql(f'LOCK TABLE "{model._meta.table_name}" IN SHARE ROW EXCLUSIVE MODE')
        yield


def _sole_writer_sqlite(database):
    return database.atomic(lock_type="IMMEDIATE")


# --- Summing amounts exactly ----------------------------------------------------------------------

def exact_sum(database=None) -> str:
    """The name of an SQL aggregate that sums amount columns exactly (never through float), for
    this connection: PostgreSQL's SUM over NUMERIC; on SQLite, where amounts are stored as text,
    `decimal_sum`, registered here."""
    database = _database(database)
    if on_postgres(database):
        return "SUM"
    database.register_aggregate(_DecimalSum, "decimal_sum", 1)
    return "decimal_sum"


class _DecimalSum:
    """SQLite's SUM would go through float; this adds the text amounts as Decimal."""

    def __init__(self):
        self.total = None

    def step(self, value):
        if value is not None:
            self.total = _EXACT.add(self.total or Decimal(0), Decimal(str(value)))

    def finalize(self):
        return None if self.total is None else str(self.total)
