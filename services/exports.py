"""Streamed exports of a store's invoices and transactions (docs/exports.md).

Rows come from a server-side cursor on PostgreSQL (SQLite iterates its own cursor) and leave as
CSV or JSON Lines batch by batch, so an export of any size runs in constant memory. The column
set is fixed and documented; amounts are decimal strings with their scale, timestamps ISO 8601
UTC, metadata one JSON column.
"""
from __future__ import annotations

import csv
import datetime as dt
import io
import json
import uuid
from dataclasses import dataclass
from typing import Callable, Iterator

from models.base import db, is_postgres
from models.invoices import Invoice
from models.stores import Store
from models.transactions import Transaction
from services import clock, invoices, money, transactions

BATCH_ROWS = 2000
# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection): such
# free-text cells get a leading apostrophe. Amounts are ours ("-0.13" is a number), never touched.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
MEDIA_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}


def _same(value):
    return value


@dataclass(frozen=True)
class Column:
    name: str
    field: object                       # the peewee field selected for it
    render: Callable = _same            # its Python value -> the exported value
    free_text: bool = False             # text a merchant or buyer chose: neutralised in CSV
    json_text: bool = False             # a JSON document stored as text: exported as stored

    def value(self, raw):
        if raw is None:
            return None
        if self.json_text:
            return raw
        return self.render(self.field.python_value(raw))


def _fiat(field):
    return Column(field.name, field, money.format_fiat)


def _timestamp(field):
    return Column(field.name, field, clock.isoformat)


INVOICE_COLUMNS = (
    Column("id", Invoice.public_id),
    Column("external_order_id", Invoice.external_order_id, free_text=True),
    Column("status", Invoice.status),
    Column("swap_status", Invoice.swap_status),
    _fiat(Invoice.amount), Column("currency", Invoice.currency),
    _fiat(Invoice.order_amount), Column("order_currency", Invoice.order_currency),
    _fiat(Invoice.paid_amount), _fiat(Invoice.received_amount), _fiat(Invoice.difference_amount),
    Column("output_asset", Invoice.output_asset),
    Column("customer_id", Invoice.customer_id, str),
    Column("payment_link_id", Invoice.payment_link_id),
    Column("transaction_hash", Invoice.transaction_hash, free_text=True),
    Column("deposit_address", Invoice.deposit_address, free_text=True),
    _timestamp(Invoice.created_at), _timestamp(Invoice.updated_at), _timestamp(Invoice.paid_at),
    _timestamp(Invoice.expires_at),
    Column("metadata", Invoice.metadata, free_text=True, json_text=True),
)

TRANSACTION_COLUMNS = (
    Column("id", Transaction.public_id),
    Column("invoice_id", Invoice.public_id),
    Column("invoice_currency", Invoice.currency),
    Column("type", Transaction.type),
    Column("status", Transaction.status),
    Column("network", Transaction.network),
    Column("token", Transaction.token),
    Column("amount", Transaction.amount, money.format_crypto),
    Column("transaction_hash", Transaction.transaction_hash, free_text=True),
    Column("from_wallet", Transaction.from_wallet, free_text=True),
    Column("to_wallet", Transaction.to_wallet, free_text=True),
    Column("confirmations", Transaction.confirmations),
    Column("verified", Transaction.verified, bool),
    _timestamp(Transaction.confirmed_at), _timestamp(Transaction.created_at), _timestamp(Transaction.updated_at),
)


@dataclass(frozen=True)
class Export:
    columns: tuple
    query: object                       # a peewee select of exactly the columns' fields


def invoice_export(store: Store, filters: dict) -> Export:
    """The store's invoices matching the list filters, oldest first."""
    query = invoices.filtered(Invoice.select(*(c.field for c in INVOICE_COLUMNS)), store, filters)
    return Export(INVOICE_COLUMNS, query.order_by(Invoice.created_at, Invoice.id))


def transaction_export(store: Store, filters: dict) -> Export:
    """The store's transactions matching the list filters, oldest first, with their invoice's id."""
    query = Transaction.select(*(c.field for c in TRANSACTION_COLUMNS)).join(Invoice)
    query = transactions.filtered(query, store, filters)
    return Export(TRANSACTION_COLUMNS, query.order_by(Transaction.created_at, Transaction.id))


def raw_batches(query, *, size: int = BATCH_ROWS) -> Iterator[list[tuple]]:
    """The query's rows as the driver returns them, `size` at a time, never all at once.

    PostgreSQL: a named (server-side) cursor, which psycopg2 allows only inside a transaction, so
    the connection leaves autocommit for the export's read and is rolled back and restored after."""
    sql, params = query.sql()
    if not is_postgres():
        cursor = db.execute_sql(sql, params)
        while rows := cursor.fetchmany(size):
            yield rows
        return
    connection = db.connection()
    connection.autocommit = False
    try:
        with connection.cursor(name=f"export_{uuid.uuid4().hex}") as cursor:
            cursor.itersize = size
            cursor.execute(sql, params)
            while rows := cursor.fetchmany(size):
                yield rows
    finally:
        connection.rollback()
        connection.autocommit = True


def _neutralised(text: str) -> str:
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


def _csv_cell(column: Column, value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if column.free_text:
        return _neutralised(value)
    return value


def csv_chunks(export: Export) -> Iterator[str]:
    """The header line, then one chunk of CSV per batch of rows."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([column.name for column in export.columns])
    yield buffer.getvalue()
    columns = export.columns
    for rows in raw_batches(export.query):
        buffer.seek(0)
        buffer.truncate()
        writer.writerows([[_csv_cell(c, c.value(raw)) for c, raw in zip(columns, row)] for row in rows])
        yield buffer.getvalue()


def jsonl_chunks(export: Export) -> Iterator[str]:
    """One JSON object per line, keys in column order; metadata is an object, not a string."""
    columns = export.columns
    for rows in raw_batches(export.query):
        lines = []
        for row in rows:
            record = {}
            for column, raw in zip(columns, row):
                value = column.value(raw)
                record[column.name] = json.loads(value) if column.json_text and value is not None else value
            lines.append(json.dumps(record, separators=(",", ":")))
        yield "\n".join(lines) + "\n"


def chunks(export: Export, file_format: str) -> Iterator[str]:
    return csv_chunks(export) if file_format == "csv" else jsonl_chunks(export)


def file_name(kind: str, filters: dict, file_format: str) -> str:
    start, end = (filters["created_after"].date().isoformat(), filters["created_before"].date().isoformat())
    return f"{kind}-{start}-{end}.{file_format}"


def range_start(text: str) -> str:
    """The CLI's --from: a bare date is that day's start (UTC)."""
    return text + "T00:00:00Z" if _is_date(text) else text


def range_end(text: str) -> str:
    """The CLI's --to: a bare date includes that whole day, so the range ends at the next midnight."""
    if _is_date(text):
        return (dt.date.fromisoformat(text) + dt.timedelta(days=1)).isoformat() + "T00:00:00Z"
    return text


def _is_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10
