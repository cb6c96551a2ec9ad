"""Exports (docs/exports.md): filters, store isolation, formats, spreadsheet safety, the CLI."""
import csv
import datetime as dt
from decimal import Decimal
import io
import json

import pytest

from services.books.exports import INVOICE_COLUMNS, TRANSACTION_COLUMNS
from tests import factories
from tests.blueprints.assertions import TIMESTAMP, assert_error

DAY = dt.datetime(2026, 3, 10, 12, 0, 0)
RANGE = {"created_after": "2026-03-01T00:00:00Z", "created_before": "2026-04-01T00:00:00Z"}


def export(client, auth, kind="invoices", **query):
    response = client.get(f"/v1/exports/{kind}", headers=auth, query_string={**RANGE, **query})
    assert response.status_code == 200, response.get_data(as_text=True)
    return response


def csv_rows(response):
    return list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))


def jsonl_rows(response):
    return [json.loads(line) for line in response.get_data(as_text=True).splitlines()]


def test_invoice_csv_has_the_documented_columns_oldest_first_within_the_range(client, auth, store):
    first = factories.make_invoice(store, now=DAY, metadata={"cart": "42", "gift": True})
    second = factories.make_invoice(store, now=DAY + dt.timedelta(days=1), amount=Decimal("7.5"))
    factories.make_invoice(store, now=dt.datetime(2026, 4, 1))          # created_before is exclusive
    factories.make_invoice(store, now=dt.datetime(2026, 2, 28, 23, 59))
    response = export(client, auth)
    assert response.mimetype == "text/csv"
    assert 'filename="invoices-2026-03-01-2026-04-01.csv"' in response.headers["Content-Disposition"]
    header = response.get_data(as_text=True).splitlines()[0]
    assert header.split(",") == [column.name for column in INVOICE_COLUMNS]
    rows = csv_rows(response)
    assert [row["id"] for row in rows] == [first.public_id, second.public_id]
    assert rows[0]["created_at"] == "2026-03-10T12:00:00Z" and TIMESTAMP.match(rows[0]["expires_at"])
    assert (rows[1]["amount"], rows[1]["currency"], rows[1]["paid_amount"]) == ("7.50", "USD", "")
    assert json.loads(rows[0]["metadata"]) == {"cart": "42", "gift": True}


def test_amounts_are_written_with_their_currency_minor_units(client, auth, store):
    factories.make_invoice(store, now=DAY, currency="JPY", amount=Decimal("1500"), order_currency="KWD",
                           order_amount=Decimal("1.25"), paid_amount=Decimal("1500"))
    for row in (csv_rows(export(client, auth))[0], jsonl_rows(export(client, auth, format="jsonl"))[0]):
        assert (row["amount"], row["paid_amount"], row["order_amount"]) == ("1500", "1500", "1.250")


def test_jsonl_carries_typed_values_and_metadata_as_an_object(client, auth, store):
    invoice = factories.make_invoice(store, now=DAY, metadata={"cart": "42"})
    txn = factories.make_transaction(invoice, now=DAY, amount=Decimal("0.000120"), confirmations=None)
    response = export(client, auth, format="jsonl")
    assert response.mimetype == "application/x-ndjson"
    [row] = jsonl_rows(response)
    assert row["metadata"] == {"cart": "42"} and row["paid_at"] is None and row["amount"] == "10.00"
    [row] = jsonl_rows(export(client, auth, "transactions", format="jsonl"))
    assert list(row) == [column.name for column in TRANSACTION_COLUMNS]
    assert (row["id"], row["invoice_id"], row["invoice_currency"]) == (txn.public_id, invoice.public_id, "USD")
    assert (row["amount"], row["verified"], row["confirmations"]) == ("0.00012", True, None)


def test_list_filters_apply(client, auth, store):
    paid = factories.make_invoice(store, now=DAY, status="paid", external_order_id="A-1")
    factories.make_invoice(store, now=DAY, status="expired", external_order_id="A-2")
    assert [r["id"] for r in csv_rows(export(client, auth, status="paid"))] == [paid.public_id]
    assert [r["id"] for r in csv_rows(export(client, auth, external_order_id="A-1"))] == [paid.public_id]
    settlement = factories.make_transaction(paid, now=DAY, type="settlement")
    factories.make_transaction(paid, now=DAY, type="payment_origin")
    rows = csv_rows(export(client, auth, "transactions", type="settlement"))
    assert [r["id"] for r in rows] == [settlement.public_id]
    rows = csv_rows(export(client, auth, "transactions", invoice_id=paid.public_id))
    assert len(rows) == 2


def test_another_stores_key_sees_nothing(client, auth, other_auth, store):
    invoice = factories.make_invoice(store, now=DAY)
    factories.make_transaction(invoice, now=DAY)
    assert len(csv_rows(export(client, auth))) == 1
    assert csv_rows(export(client, other_auth)) == []
    assert export(client, other_auth, "transactions", format="jsonl").get_data() == b""


def test_csv_neutralises_formulas_but_not_amounts(client, auth, store):
    invoice = factories.make_invoice(store, now=DAY, external_order_id="=HYPERLINK(\"http://evil\")",
                                     metadata={"note": "=1+1"}, status="paid", difference_amount=Decimal("-0.13"))
    factories.make_transaction(invoice, now=DAY, from_wallet="@SUM(A1)", to_wallet="+cmd", transaction_hash="-2")
    [row] = csv_rows(export(client, auth))
    assert row["external_order_id"] == "'=HYPERLINK(\"http://evil\")"
    assert row["difference_amount"] == "-0.13"
    assert json.loads(row["metadata"]) == {"note": "=1+1"}      # a JSON cell starts with "{"
    [txn] = csv_rows(export(client, auth, "transactions"))
    assert (txn["from_wallet"], txn["to_wallet"], txn["transaction_hash"]) == ("'@SUM(A1)", "'+cmd", "'-2")
    [row] = jsonl_rows(export(client, auth, format="jsonl"))
    assert row["external_order_id"] == "=HYPERLINK(\"http://evil\")"      # JSON is data, never a formula


@pytest.mark.parametrize("query, param", [
    ({"created_after": None}, "created_after"),
    ({"created_before": None}, "created_before"),
    ({"created_before": "2027-03-03T00:00:00Z"}, "created_before"),
    ({"created_before": "2026-02-01T00:00:00Z"}, "created_before"),
    ({"format": "xlsx"}, "format"),
    ({"limit": "10"}, "limit"),
    ({"status": "bogus"}, "status"),
    ({"created_after": "yesterday"}, "created_after"),
])
def test_bad_queries_are_json_400s_naming_the_parameter(client, auth, query, param):
    merged = {key: value for key, value in {**RANGE, **query}.items() if value is not None}
    for kind in ("invoices", "transactions"):
        if kind == "transactions" and param == "status" or kind == "transactions" and param == "format":
            continue
        response = client.get(f"/v1/exports/{kind}", headers=auth, query_string=merged)
        assert_error(response, 400, "validation_error", param=param)


def test_a_full_year_is_allowed(client, auth):
    export(client, auth, created_after="2025-03-01T00:00:00Z", created_before="2026-03-02T00:00:00Z")


def test_scopes_and_keys(client, store):
    only_transactions = {"Authorization": "Bearer " + factories.make_key(store, scopes=["transactions:read"])}
    assert_error(client.get("/v1/exports/invoices", headers=only_transactions, query_string=RANGE),
                 403, "INSUFFICIENT_SCOPE")
    export(client, only_transactions, "transactions")
    assert_error(client.get("/v1/exports/invoices", query_string=RANGE), 401, "missing_api_key")


def test_counts_against_the_read_bucket(client, auth):
    response = export(client, auth)
    assert response.headers["RateLimit-Limit"] == "600"


def test_cli_export_writes_the_same_file(app, client, auth, store):
    invoice = factories.make_invoice(store, now=DAY, external_order_id="-5")
    factories.make_invoice(store, now=dt.datetime(2026, 3, 31, 23, 0))
    runner = app.test_cli_runner()
    result = runner.invoke(args=["export", "invoices", "--store", str(store.id), "--from", "2026-03-01",
                                 "--to", "2026-03-31"])
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == export(client, auth).get_data()
    assert f"{invoice.public_id},'-5," in result.output
    result = runner.invoke(args=["export", "transactions", "--store", str(store.id), "--from", "2026-03-01",
                                 "--to", "2026-03-31", "--format", "jsonl"])
    assert result.exit_code == 0 and result.output == ""
    result = runner.invoke(args=["export", "invoices", "--store", str(store.id), "--from", "2026-03-01",
                                 "--to", "2028-03-31"])
    assert result.exit_code != 0 and "366 days" in result.output


@pytest.mark.parametrize("kind", ["invoices", "transactions"])
def test_postgresql_writes_the_same_lines_as_the_python_path(app, store, kind):
    """PostgreSQL writes each line itself (each `Kind.sql`, through infra/database.py `copy_out`); the
    Python rules (SQLite's path) must give the same CSV byte for byte and the same JSON on awkward values."""
    from models.base import db, is_postgres
    from services.books import exports
    if not is_postgres():
        pytest.skip("the server-written lines are PostgreSQL's (TEST_DATABASE_URL)")
    awkward = ['=1+1', 'a,b', 'say "hi"', 'two\nlines', 'cr\rhere', '\ttab', 'üñí €', 'back\\slash', '', '-5']
    for index, text in enumerate(awkward):
        invoice = factories.make_invoice(
            store, now=DAY + dt.timedelta(minutes=index), external_order_id=text or None,
            metadata={"note": text, "n": index} if index % 2 else None, status="paid",
            currency=["USD", "JPY", "KWD"][index % 3], order_currency=["JPY", "EUR", "BHD", "USD"][index % 4],
            amount=Decimal("1234.5"), paid_amount=Decimal("0.10"), difference_amount=Decimal("-0.13"),
            customer_id="3f0c4a52-1b7e-4b2a-9c55-4d2f3c1e0a11" if index % 3 else None,
            paid_at=DAY + dt.timedelta(minutes=index, seconds=59, microseconds=999999))
        factories.make_transaction(invoice, now=DAY + dt.timedelta(minutes=index), from_wallet=text or None,
                                   transaction_hash=text, amount=Decimal(["25", "25.125", "0.000120", "100.10"][index % 4]),
                                   verified=bool(index % 2), confirmations=index if index % 3 else None)
    filters = {"created_after": dt.datetime(2026, 3, 1), "created_before": dt.datetime(2026, 4, 1)}
    build = exports.invoice_export if kind == "invoices" else exports.transaction_export
    with db.connection_context():
        export = build(store, {**filters})
        python_csv = "".join(exports.csv_chunks(export))
        server_csv = b"".join(exports.server_lines(export, "csv")).decode()
        python_jsonl = "".join(exports.jsonl_chunks(export))
        server_jsonl = b"".join(exports.server_lines(export, "jsonl")).decode()
    assert len(python_csv.splitlines()) > len(awkward)
    assert server_csv == python_csv
    assert [json.loads(line) for line in server_jsonl.splitlines()] == \
        [json.loads(line) for line in python_jsonl.splitlines()]
    assert [list(json.loads(line)) for line in server_jsonl.splitlines()] == \
        [list(json.loads(line)) for line in python_jsonl.splitlines()]     # keys in column order


def test_a_reader_that_goes_away_stops_the_copy_and_drops_its_connection(app, store):
    """The PostgreSQL export streams from a COPY in a helper thread: closing the stream midway must
    end that thread and never hand the half-read connection back to the pool (infra/database.py)."""
    import threading

    from infra import database
    from models.base import db, is_postgres
    from services.books import exports
    if not is_postgres():
        pytest.skip("the COPY path is PostgreSQL's (TEST_DATABASE_URL)")
    for index in range(300):
        factories.make_invoice(store, now=DAY + dt.timedelta(seconds=index), metadata={"pad": "x" * 500})
    filters = {"created_after": dt.datetime(2026, 3, 1), "created_before": dt.datetime(2026, 4, 1)}
    with db.connection_context():
        export = exports.invoice_export(store, filters)
        stream = database.copy_out(export.query.select(exports._sql_csv_cell(export.columns[0])), "CSV",
                                   lambda row: row, piece_bytes=100, pieces_ahead=1)
        copying = db.connection()
        first = next(stream)
        stream.close()
        assert first.startswith(b"inv_")
        assert not any(thread.name == "export-copy" for thread in threading.enumerate())
        assert copying.closed and db.connection() is not copying    # dropped, not pooled mid-COPY
        assert db.execute_sql("SELECT 1").fetchone() == (1,)
