"""Exports (docs/exports.md): filters, store isolation, formats, spreadsheet safety, the CLI."""
import csv
import datetime as dt
import io
import json
from decimal import Decimal

import pytest

from services.exports import INVOICE_COLUMNS, TRANSACTION_COLUMNS
from tests import factories
from tests.api.assertions import TIMESTAMP, assert_error

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
