"""The whole sandbox pipeline through the API and the pollers, one test per outcome."""
from decimal import Decimal

import pytest

from tests.payflow import event_types, run_pipeline, transactions_of


def _create(client, auth, amount="10.00"):
    response = client.post("/v1/invoices", json={"amount": amount}, headers=auth)
    assert response.status_code == 201, response.json
    return response.json["id"]


def _pay(client, auth, invoice_id, **body):
    response = client.post(f"/v1/test_helpers/invoices/{invoice_id}/pay", json=body, headers=auth)
    assert response.status_code == 202, response.json
    return response.json


def _invoice(invoice_id):
    from models.base import db
    from models.invoices import Invoice

    with db.connection_context():
        return Invoice.get(Invoice.public_id == invoice_id)


def test_success_goes_paid_then_settled(client, auth):
    invoice_id = _create(client, auth)
    paid = _pay(client, auth, invoice_id)
    assert paid["status"] == "awaiting_payment"
    run_pipeline()
    invoice = _invoice(invoice_id)
    status = client.get(f"/v1/invoices/{invoice_id}/status", headers=auth).json
    assert status["status"] == "paid"
    assert status["swap_status"] is None
    assert status["paid_amount"] == "10.05"           # 0.5% sandbox fee on 10 USDC, paid by the buyer
    assert status["received_amount"] == "10.00"
    assert status["difference_amount"] == "-0.05"
    assert event_types(invoice) == ["invoice.created", "invoice.awaiting_payment", "invoice.paid", "invoice.settled"]
    kinds = sorted((t.type, t.status, t.token) for t in transactions_of(invoice))
    assert kinds == [("payment_origin", "confirmed", "usdc.eth"), ("settlement", "confirmed", "usdc.near")]
    assert status["transaction_hash"] == next(t.transaction_hash for t in transactions_of(invoice)
                                              if t.type == "payment_origin")


@pytest.mark.parametrize("outcome, final, last_event, txn_types", [
    ("underpaid", "underpaid", "invoice.underpaid", ["payment_origin"]),
    ("refunded", "refunded", "invoice.refunded", ["payment_origin", "refund"]),
    ("failed", "failed", "invoice.failed", ["payment_origin"]),
])
def test_other_outcomes(client, auth, outcome, final, last_event, txn_types):
    invoice_id = _create(client, auth)
    _pay(client, auth, invoice_id, outcome=outcome, origin_asset="sol")
    run_pipeline()
    invoice = _invoice(invoice_id)
    assert invoice.status == final
    assert invoice.swap_status is None
    assert event_types(invoice)[-1] == last_event
    assert sorted(t.type for t in transactions_of(invoice)) == txn_types
    if outcome == "underpaid":
        assert invoice.paid_amount == Decimal("5.03")    # half the quoted SOL, valued at the sandbox price
    assert client.get(f"/v1/invoices/{invoice_id}/status", headers=auth).json["received_amount"] is None


def test_transactions_show_in_routes_and_by_hash(client, auth):
    invoice_id = _create(client, auth)
    _pay(client, auth, invoice_id)
    run_pipeline()
    listed = client.get(f"/v1/invoices/{invoice_id}/transactions", headers=auth).json["data"]
    assert {t["type"] for t in listed} == {"payment_origin", "settlement"}
    settlement = next(t for t in listed if t["type"] == "settlement")
    assert settlement["to_wallet"] == "merchant.near" and settlement["amount"] == "10.00"
    found = client.get(f"/v1/transactions/by-hash/{settlement['transaction_hash']}", headers=auth)
    assert found.status_code == 200 and found.json["id"] == settlement["id"]


def test_replayed_final_status_changes_nothing(client, auth):
    from models.base import db
    from providers.sandbox import SandboxProvider
    from services.engine import payments
    from core.clock import utcnow

    invoice_id = _create(client, auth)
    _pay(client, auth, invoice_id)
    run_pipeline()
    invoice = _invoice(invoice_id)
    before = (event_types(invoice), [t.public_id for t in transactions_of(invoice)])
    with db.connection_context():
        final = SandboxProvider().deposit_status(invoice.deposit_address)
        assert final.status == "SUCCESS"
        for _ in range(3):
            payments.apply_deposit_status(invoice, final, now=utcnow())
    assert (event_types(invoice), [t.public_id for t in transactions_of(invoice)]) == before
