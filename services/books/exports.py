"""Streamed exports of a store's invoices and transactions (docs/exports.md).

Rows come from a server-side cursor on PostgreSQL (SQLite iterates its own cursor; both in
infra/database.py) and leave as CSV or JSON Lines batch by batch, so an export of any size runs in
constant memory. The column set is fixed and documented; amounts are decimal strings with their
scale, timestamps ISO 8601 UTC, metadata one JSON column.

Each kind of column is defined once (`Kind`), its rule written for both paths side by side: in
Python (`converter`, SQLite's path) and in SQL (`sql`, for PostgreSQL, where the server writes each
finished line: converting every cell in Python made the export six times slower than `COPY`,
docs/performance.md). tests/services/books/ runs both on the same rows and compares them.
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

from core import clock, currencies, money
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


_SQL_FORMULA_PREFIXES = pw.SQL("(" + ", ".join(
    "E'" + prefix.replace("\t", "\\t").replace("\r", "\\r") + "'" for prefix in FORMULA_PREFIXES) + ")")
_SQL_TIMESTAMP = 'YYYY-MM-DD"T"HH24:MI:SS"Z"'       # clock.isoformat: seconds, truncated, UTC


class Kind:
    """How one kind of column leaves, on both paths. `converter`: the Python function from the
    driver's value (never None) to the exported one, or None when it leaves as it is; `parse` turns
    the text SQLite hands back for dates and UUIDs into the field's value (None when the driver
    already did). `sql`: PostgreSQL's expression for the same value. In CSV every value is text; in
    JSON Lines numbers, booleans and metadata keep their JSON type."""

    def converter(self, parse, *, for_csv: bool):
        return None

    def sql(self, field, *, for_csv: bool) -> pw.Node:
        return field.cast("text") if for_csv else field


class _Fiat(Kind):
    """An amount in the currency held by `currency` (a column of the same row), with exactly that
    currency's minor units: its converter takes the amount and the row's currency."""

    def __init__(self, currency):
        self.currency = currency

    def converter(self, parse, *, for_csv):
        return money.format_fiat            # Decimal (PostgreSQL) or its text (SQLite) alike

    def sql(self, field, *, for_csv):
        return fn.round(field, _sql_minor_units(self.currency)).cast("text")


def _sql_minor_units(currency_field) -> pw.Node:
    """core/currencies.py's minor units as SQL: two unless the code has other."""
    by_places = {}
    for code, places in currencies.MINOR_UNITS.items():
        by_places.setdefault(places, []).append(code)
    return pw.Case(None, [(currency_field.in_(codes), places) for places, codes in sorted(by_places.items())
                          if places != 2], 2)


class _Crypto(Kind):
    def converter(self, parse, *, for_csv):
        return money.format_crypto

    def sql(self, field, *, for_csv):
        exact = fn.trim_scale(field)
        return pw.Case(None, [(fn.scale(exact) >= 2, exact.cast("text"))], fn.round(field, 2).cast("text"))


class _Timestamp(Kind):
    def converter(self, parse, *, for_csv):
        return (lambda raw: clock.isoformat(parse(raw))) if parse else clock.isoformat

    def sql(self, field, *, for_csv):
        return fn.to_char(field, _SQL_TIMESTAMP)


class _Uuid(Kind):
    def converter(self, parse, *, for_csv):
        return (lambda raw: str(parse(raw))) if parse else str

    def sql(self, field, *, for_csv):
        return field.cast("text")


class _Bool(Kind):
    def converter(self, parse, *, for_csv):
        return (lambda raw: "true" if raw else "false") if for_csv else bool

    def sql(self, field, *, for_csv):
        return pw.Case(field, [(True, "true"), (False, "false")]) if for_csv else field


class _Text(Kind):
    """Free text a merchant or buyer chose: neutralised in CSV."""

    def converter(self, parse, *, for_csv):
        return _neutralised if for_csv else None

    def sql(self, field, *, for_csv):
        if not for_csv:
            return field
        return pw.Case(None, [(fn.left(field, 1).in_(_SQL_FORMULA_PREFIXES), fn.CONCAT("'", field))], field)


class _Json(Kind):
    """A JSON document stored as text: an object in JSON Lines, the text itself in CSV."""

    def converter(self, parse, *, for_csv):
        return None if for_csv else json.loads

    def sql(self, field, *, for_csv):
        return field.cast("text") if for_csv else field.cast("json")


PLAIN, CRYPTO, TIMESTAMP, UUID, BOOL, TEXT, JSON = (
    Kind(), _Crypto(), _Timestamp(), _Uuid(), _Bool(), _Text(), _Json())
FIAT, ORDER_FIAT = _Fiat(Invoice.currency), _Fiat(Invoice.order_currency)


@dataclass(frozen=True)
class Column:
    """One exported column: its name, the peewee field selected for it and its kind (as the
    database gives it, unless said otherwise)."""

    name: str
    field: object
    kind: Kind = PLAIN

    def converter(self, *, for_csv: bool):
        return self.kind.converter(database.value_parser(self.field), for_csv=for_csv)

    def sql(self, *, for_csv: bool) -> pw.Node:
        return self.kind.sql(self.field, for_csv=for_csv)


def _sql_csv_cell(column: Column) -> pw.Node:
    """The cell for `COPY … WITH CSV`, which quotes like Python's csv writer but writes empty text
    as `""`: empty text goes as NULL, so both leave an empty cell."""
    value = column.sql(for_csv=True)
    return fn.NULLIF(value, "") if column.kind in (PLAIN, TEXT, JSON) else value


INVOICE_COLUMNS = (
    Column("id", Invoice.public_id),
    Column("external_order_id", Invoice.external_order_id, TEXT),
    Column("status", Invoice.status),
    Column("swap_status", Invoice.swap_status),
    Column("amount", Invoice.amount, FIAT), Column("currency", Invoice.currency),
    Column("order_amount", Invoice.order_amount, ORDER_FIAT), Column("order_currency", Invoice.order_currency),
    Column("paid_amount", Invoice.paid_amount, FIAT),
    Column("received_amount", Invoice.received_amount, FIAT),
    Column("difference_amount", Invoice.difference_amount, FIAT),
    Column("output_asset", Invoice.output_asset),
    Column("customer_id", Invoice.customer_id, UUID),
    Column("payment_link_id", Invoice.payment_link_id),
    Column("transaction_hash", Invoice.transaction_hash, TEXT),
    Column("deposit_address", Invoice.deposit_address, TEXT),
    Column("created_at", Invoice.created_at, TIMESTAMP), Column("updated_at", Invoice.updated_at, TIMESTAMP),
    Column("paid_at", Invoice.paid_at, TIMESTAMP), Column("expires_at", Invoice.expires_at, TIMESTAMP),
    # Stored as canonical JSON text (a cell starting with "{", never a formula): exported as stored.
    Column("metadata", Invoice.metadata, JSON),
    Column("refunded_amount", Invoice.refunded_amount, FIAT),
    # What the buyer's commit fixed (docs/currencies.md): the rate (exact), the payout owed in
    # `output_asset` units, and the operator's fee.
    Column("exchange_rate", Invoice.exchange_rate, CRYPTO),
    Column("payout_amount", Invoice.payout_amount, CRYPTO),
    Column("fee_bps", Invoice.fee_bps),
    Column("fee_amount", Invoice.fee_amount, FIAT),
)

TRANSACTION_COLUMNS = (
    Column("id", Transaction.public_id),
    Column("invoice_id", Invoice.public_id),
    Column("invoice_currency", Invoice.currency),
    Column("type", Transaction.type),
    Column("status", Transaction.status),
    Column("network", Transaction.network),
    Column("token", Transaction.token),
    Column("amount", Transaction.amount, CRYPTO),
    Column("transaction_hash", Transaction.transaction_hash, TEXT),
    Column("from_wallet", Transaction.from_wallet, TEXT),
    Column("to_wallet", Transaction.to_wallet, TEXT),
    Column("confirmations", Transaction.confirmations),
    Column("verified", Transaction.verified, BOOL),
    Column("confirmed_at", Transaction.confirmed_at, TIMESTAMP),
    Column("created_at", Transaction.created_at, TIMESTAMP),
    Column("updated_at", Transaction.updated_at, TIMESTAMP),
    # A merchant refund's delivery: the refund and its amount in the invoice currency (docs/refunds.md).
    Column("refund_id", Refund.public_id),
    Column("refund_amount", Refund.amount, FIAT),
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
    need converting are touched: this loop runs once per cell of a million-row export. A fiat amount's
    converter also gets its row's currency (`currency_at`: that column's index)."""
    fields = [column.field for column in export.columns]
    converters = [(index, convert, _currency_index(column, fields)) for index, column in enumerate(export.columns)
                  if (convert := column.converter(for_csv=for_csv)) is not None]
    for rows in raw_batches(export.query):
        converted = []
        for raw in rows:
            row = list(raw)
            for index, convert, currency_at in converters:
                value = row[index]
                if value is not None:
                    row[index] = convert(value) if currency_at is None else convert(value, raw[currency_at])
            converted.append(row)
        yield converted


def _currency_index(column: Column, fields: list) -> int | None:
    if not isinstance(column.kind, _Fiat):
        return None
    return next(index for index, field in enumerate(fields) if field is column.kind.currency)


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
    """PostgreSQL: the server converts every cell (`Kind.sql`) and writes the file with `COPY`.

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
        rows = export.query.select(*(column.sql(for_csv=False).alias(column.name)
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
