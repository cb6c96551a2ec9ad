"""Every book of an invoice's merchant refunds, read through the API, and the rule they keep:
never more out than in, and every book tells the same story (docs/refunds.md#the-books)."""
from __future__ import annotations

import csv
import datetime as dt
from decimal import Decimal
import io

from core.clock import utcnow


def _days() -> tuple[dt.date, dt.date]:
    today = utcnow().date()
    return today - dt.timedelta(days=2), today + dt.timedelta(days=2)


def _export_range() -> dict:
    first, last = _days()
    return {"created_after": f"{first}T00:00:00Z", "created_before": f"{last}T00:00:00Z"}


def _csv(client, auth, kind: str) -> list[dict]:
    response = client.get(f"/v1/exports/{kind}", headers=auth, query_string=_export_range())
    assert response.status_code == 200, response.get_data(as_text=True)
    return list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))


def _money(text) -> Decimal:
    return Decimal(text or 0)


def assert_refund_books_agree(client, auth, invoice_id: str) -> Decimal:
    """What the invoice's refunds delivered (in the invoice currency) never exceeds what it
    received, and the invoice, the refunds list, both exports and the statement agree on it.
    Returns the amount delivered."""
    invoice = client.get(f"/v1/invoices/{invoice_id}", headers=auth).json
    received = client.get(f"/v1/invoices/{invoice_id}/status", headers=auth).json["received_amount"]
    refunds = client.get(f"/v1/invoices/{invoice_id}/refunds", headers=auth, query_string={"limit": 100}).json
    assert refunds["has_more"] is False
    succeeded = {r["id"]: r for r in refunds["data"] if r["status"] == "succeeded"}
    delivered = [t for t in _csv(client, auth, "transactions")
                 if t["type"] == "refund" and t["invoice_id"] == invoice_id and t["refund_id"]]
    # A refund shows what was delivered: every delivery is a succeeded refund, and the other way round.
    assert sorted(t["refund_id"] for t in delivered) == sorted(succeeded), (delivered, refunds["data"])
    for refund in succeeded.values():
        assert refund["amount_out"] is not None and refund["transaction_hash"]
    total = sum((_money(r["amount"]) for r in succeeded.values()), Decimal(0))
    assert total == sum((_money(t["refund_amount"]) for t in delivered), Decimal(0))
    assert total <= _money(received), (total, received)          # never more out than in
    assert _money(invoice["refunded_amount"]) == total
    exported = [row for row in _csv(client, auth, "invoices") if row["id"] == invoice_id]
    assert len(exported) == 1 and _money(exported[0]["refunded_amount"]) == total
    assert total == (_statement_refunded(client, auth, invoice["currency"])
                     - _others(client, auth, invoice_id, invoice["currency"]))
    return total


def _statement_refunded(client, auth, currency: str) -> Decimal:
    response = client.get("/v1/reports/settlements", headers=auth,
                          query_string=dict(zip(("from", "to"), map(str, _days()))))
    assert response.status_code == 200, response.json
    return sum((_money(row["refunded"]) for row in response.json["data"] if row["currency"] == currency), Decimal(0))


def _others(client, auth, invoice_id: str, currency: str) -> Decimal:
    """What the store's other invoices in `currency` had delivered by merchant refunds (the statement
    sums the store, a line per currency)."""
    return sum((_money(t["refund_amount"]) for t in _csv(client, auth, "transactions")
                if t["type"] == "refund" and t["invoice_id"] != invoice_id and t["refund_id"]
                and t["invoice_currency"] == currency), Decimal(0))
