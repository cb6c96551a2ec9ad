"""Streamed exports of a store's invoices and transactions (docs/exports.md).

Rows come from a server-side cursor on PostgreSQL (SQLite iterates its own cursor; both in
infra/database.py) and leave as CSV or JSON Lines batch by batch, so an export of any size runs in constant memory. The column
set is fixed and documented; amounts are decimal strings with their scale, timestamps ISO 8601
UTC, metadata one JSON column.

Each column kind's rule is written twice, side by side: in Python (`_converter`, for SQLite) and in
SQL (`_sql_value`, for PostgreSQL, where the server writes each finished line: converting every
cell in Python made the export six times slower than `COPY`, docs/performance.md).
tests/services/books/ runs both on the same rows and compares them.
"""
from __future__ import annotations

import csv
import datetime as dt
from dataclasses import dataclass
import io
import json
from typing import Iterator

import peewee as pw
from peewee import fn

from core import clock, money
from infra import database
from models.invoices import Invoice
from models.refunds import Refund
from models.stores import Store
from models.transactions import Transaction
from services.engine import invoices, transactions

BATCH_ROWS = 2000
# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection): such
# free-text cells get a leading apostrophe. Amounts are ours ("-0.13" is a number), never touched.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
MEDIA_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}


@dataclass(frozen=True)
class Column:
    """One exported column. `kind` says how a value leaves: `plain` (as the database gives it),
    `fiat`, `crypto`, `timestamp`, `uuid`, `bool`, `text` (free text a merchant or buyer chose,
    neutralised in CSV) or `json` (a JSON document stored as text)."""

    name: str
    field: object                       # the peewee field selected for it
    kind: str = "plain"


def _converter(column: Column, *, for_csv: bool):
    """The function from the driver's value (never None) to the exported one, or None when the value
    leaves as it is. Dates and UUIDs the driver hands back as text are parsed first (`parse`)."""
    kind, parse = column.kind, database.value_parser(column.field)
    if kind == "fiat":
        return money.format_fiat            # Decimal (PostgreSQL) or its text (SQLite) alike
    if kind == "crypto":
        return money.format_crypto
    if kind == "timestamp":
        return (lambda raw: clock.isoformat(parse(raw))) if parse else clock.isoformat
    if kind == "uuid":
        return (lambda raw: str(parse(raw))) if parse else str
    if kind == "bool":
        if for_csv:
            return lambda raw: "true" if raw else "false"
        return bool
    if kind == "text" and for_csv:
        return _neutralised
    if kind == "json" and not for_csv:
        return json.loads
    return None


_SQL_FORMULA_PREFIXES = pw.SQL("(" + ", ".join(
    "E'" + prefix.replace("\t", "\\t").replace("\r", "\\r") + "'" for prefix in FORMULA_PREFIXES) + ")")
_SQL_TIMESTAMP = 'YYYY-MM-DD"T"HH24:MI:SS"Z"'       # clock.isoformat: seconds, truncated, UTC


def _sql_value(column: Column, *, for_csv: bool) -> pw.Node:
    """The exported value of `column` computed by PostgreSQL: `_converter`'s rule, in SQL.
    In CSV every value is text; in JSON Lines numbers, booleans and metadata keep their JSON type."""
    kind, field = column.kind, column.field
    if kind == "fiat":
        return fn.round(field, 2).cast("text")
    if kind == "crypto":
        exact = fn.trim_scale(field)
        return pw.Case(None, [(fn.scale(exact) >= 2, exact.cast("text"))], fn.round(field, 2).cast("text"))
    if kind == "timestamp":
        return fn.to_char(field, _SQL_TIMESTAMP)
    if kind == "uuid":
        return field.cast("text")
    if kind == "bool" and for_csv:
        return pw.Case(field, [(True, "true"), (False, "false")])
    if kind == "text" and for_csv:
        return pw.Case(None, [(fn.left(field, 1).in_(_SQL_FORMULA_PREFIXES), fn.CONCAT("'", field))], field)
    if kind == "json" and not for_csv:
        return field.cast("json")
    return field.cast("text") if for_csv else field


def _sql_csv_cell(column: Column) -> pw.Node:
    """The cell for `COPY … WITH CSV`, which quotes like Python's csv writer but writes empty text
    as `""`: empty text goes as NULL, so both leave an empty cell."""
    value = _sql_value(column, for_csv=True)
    return fn.NULLIF(value, "") if column.kind in ("plain", "text", "json") else value


INVOICE_COLUMNS = (
    Column("id", Invoice.public_id),
    Column("external_order_id", Invoice.external_order_id, "text"),
    Column("status", Invoice.status),
    Column("swap_status", Invoice.swap_status),
    Column("amount", Invoice.amount, "fiat"), Column("currency", Invoice.currency),
    Column("order_amount", Invoice.order_amount, "fiat"), Column("order_currency", Invoice.order_currency),
    Column("paid_amount", Invoice.paid_amount, "fiat"),
    Column("received_amount", Invoice.received_amount, "fiat"),
    Column("difference_amount", Invoice.difference_amount, "fiat"),
    Column("output_asset", Invoice.output_asset),
    Column("customer_id", Invoice.customer_id, "uuid"),
    Column("payment_link_id", Invoice.payment_link_id),
    Column("transaction_hash", Invoice.transaction_hash, "text"),
    Column("deposit_address", Invoice.deposit_address, "text"),
    Column("created_at", Invoice.created_at, "timestamp"), Column("updated_at", Invoice.updated_at, "timestamp"),
    Column("paid_at", Invoice.paid_at, "timestamp"), Column("expires_at", Invoice.expires_at, "timestamp"),
    # Stored as canonical JSON text (a cell starting with "{", never a formula): exported as stored.
    Column("metadata", Invoice.metadata, "json"),
    Column("refunded_amount", Invoice.refunded_amount, "fiat"),
)

TRANSACTION_COLUMNS = (
    Column("id", Transaction.public_id),
    Column("invoice_id", Invoice.public_id),
    Column("invoice_currency", Invoice.currency),
    Column("type", Transaction.type),
    Column("status", Transaction.status),
    Column("network", Transaction.network),
    Column("token", Transaction.token),
    Column("amount", Transaction.amount, "crypto"),
    Column("transaction_hash", Transaction.transaction_hash, "text"),
    Column("from_wallet", Transaction.from_wallet, "text"),
    Column("to_wallet", Transaction.to_wallet, "text"),
    Column("confirmations", Transaction.confirmations),
    Column("verified", Transaction.verified, "bool"),
    Column("confirmed_at", Transaction.confirmed_at, "timestamp"),
    Column("created_at", Transaction.created_at, "timestamp"),
    Column("updated_at", Transaction.updated_at, "timestamp"),
    # A merchant refund's delivery: the refund and its amount in the invoice currency (docs/refunds.md).
    Column("refund_id", Refund.public_id),
    Column("refund_amount", Refund.amount, "fiat"),
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
    query = (Transaction.select(*(c.field for c in TRANSACTION_COLUMNS)).join(Invoice).switch(Transaction)
             .join(Refund, pw.JOIN.LEFT_OUTER, on=(Transaction.refund == Refund.id)))
    query = transactions.filtered(query, store, filters)
    return Export(TRANSACTION_COLUMNS, query.order_by(Transaction.created_at, Transaction.id))


def raw_batches(query, *, size: int = BATCH_ROWS) -> Iterator[list[tuple]]:
    """The query's rows as the driver returns them, `size` at a time, never all at once."""
    sql, params = query.sql()
    return database.stream_rows(sql, params, size=size)


def _neutralised(text: str) -> str:
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


def converted_batches(export: Export, *, for_csv: bool) -> Iterator[list[list]]:
    """Batches of rows with every value as it is exported (None stays None). Only the columns that
    need converting are touched: this loop runs once per cell of a million-row export."""
    converters = [(index, convert) for index, column in enumerate(export.columns)
                  if (convert := _converter(column, for_csv=for_csv)) is not None]
    for rows in raw_batches(export.query):
        converted = []
        for raw in rows:
            row = list(raw)
            for index, convert in converters:
                value = row[index]
                if value is not None:
                    row[index] = convert(value)
            converted.append(row)
        yield converted


def csv_chunks(export: Export) -> Iterator[str]:
    """The header line, then one chunk of CSV per batch of rows (None is an empty cell)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([column.name for column in export.columns])
    yield buffer.getvalue()
    for rows in converted_batches(export, for_csv=True):
        buffer.seek(0)
        buffer.truncate()
        writer.writerows(rows)
        yield buffer.getvalue()


def jsonl_chunks(export: Export) -> Iterator[str]:
    """One JSON object per line, keys in column order; metadata is an object, not a string."""
    names = [column.name for column in export.columns]
    encode = json.JSONEncoder(separators=(",", ":")).encode
    for rows in converted_batches(export, for_csv=False):
        yield "".join(encode(dict(zip(names, row))) + "\n" for row in rows)


def server_lines(export: Export, file_format: str) -> Iterator[bytes]:
    """PostgreSQL: the server converts every cell (`_sql_value`) and writes the file with `COPY`.

    CSV: `COPY … WITH CSV` quotes exactly as Python's csv writer does (a quote, a comma or a line
    break), empty text is sent as NULL so that both leave an empty cell, and each row's `\\n` becomes
    `\\r\\n` (one row a message: see infra/database.py `copy_out`). JSON Lines: `row_to_json` in `COPY`'s text format,
    whose only escape in JSON text is a doubled backslash. `row_to_json` writes non-ASCII characters
    as they are where Python escapes them (`\\u00fc`): the same JSON."""
    if file_format == "csv":
        yield (",".join(column.name for column in export.columns) + "\r\n").encode()
        query = export.query.select(*(_sql_csv_cell(column) for column in export.columns))
        yield from database.copy_out(query, "CSV", lambda row: row[:-1] + b"\r\n")
    else:
        rows = export.query.select(*(_sql_value(column, for_csv=False).alias(column.name)
                                     for column in export.columns))
        yield from database.copy_out(_JsonRows(rows), "TEXT", lambda row: row.replace(b"\\\\", b"\\"))


class _JsonRows:
    """`SELECT row_to_json(r) FROM (rows) AS r`: one JSON object a row, in `rows`' order (a
    subquery's ORDER BY holds for a plain scan over it: nothing above it joins, groups or sorts)."""

    def __init__(self, rows):
        self.rows = rows

    def sql(self) -> tuple[str, list]:
        sql, params = self.rows.sql()
        return "SELECT row_to_json(r) FROM (" + sql + ") AS r", params


def chunks(export: Export, file_format: str) -> Iterator[bytes]:
    """The file, piece by piece: written by PostgreSQL, or converted here on SQLite."""
    def written_here() -> Iterator[bytes]:
        python_chunks = csv_chunks(export) if file_format == "csv" else jsonl_chunks(export)
        return (chunk.encode() for chunk in python_chunks)

    return database.file_chunks(lambda: server_lines(export, file_format), written_here)


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
