"""POST /v1/test_helpers/invoices/{id}/pay (docs/payment-engine.md)."""
import dataclasses
from decimal import Decimal

import pytest

from tests import factories
from tests.blueprints.assertions import STATUS_FIELDS
from tests.payflow import reload, run_pipeline


def test_pay_commits_a_quote_and_records_a_deposit(client, auth, store):
    invoice = factories.make_invoice(store)
    response = client.post(f"/v1/test_helpers/invoices/{invoice.public_id}/pay", json={}, headers=auth)
    assert response.status_code == 202
    assert response.json["id"] == invoice.public_id and response.json["status"] == "awaiting_payment"
    stored = reload(invoice)
    assert stored.origin_asset == "usdc.eth" and stored.deposit_address.startswith("0x")
    from infra import queues

    assert queues.redis().llen("rq:queue:chain") == 1    # a poll is on its way


def test_an_explicit_short_amount_means_underpaid(client, auth, store):
    invoice = factories.make_invoice(store)
    client.post(f"/v1/test_helpers/invoices/{invoice.public_id}/pay",
                json={"origin_asset": "usdc.base", "amount": "3"}, headers=auth)
    run_pipeline()
    assert reload(invoice).status == "underpaid" and reload(invoice).paid_amount == Decimal("3.00")


@pytest.mark.parametrize("body, status, code", [
    ({"outcome": "lost"}, 400, "validation_error"),
    ({"amount": 5}, 400, "validation_error"),
    ({"origin_asset": "doge"}, 400, "unsupported_asset"),
])
def test_bad_input(client, auth, store, body, status, code):
    invoice = factories.make_invoice(store)
    response = client.post(f"/v1/test_helpers/invoices/{invoice.public_id}/pay", json=body, headers=auth)
    assert (response.status_code, response.json["error"]["code"]) == (status, code)


def test_scope_store_and_state_rules(client, auth, other_auth, store):
    invoice = factories.make_invoice(store)
    read_only = {"Authorization": f"Bearer {factories.make_key(store, scopes=['invoices:read'])}"}
    url = f"/v1/test_helpers/invoices/{invoice.public_id}/pay"
    assert client.post(url, json={}, headers=read_only).json["error"]["code"] == "INSUFFICIENT_SCOPE"
    assert client.post(url, json={}).status_code == 401
    assert client.post(url, json={}, headers=other_auth).status_code == 404
    cancelled = factories.make_invoice(store, status="cancelled")
    response = client.post(f"/v1/test_helpers/invoices/{cancelled.public_id}/pay", json={}, headers=auth)
    assert response.json["error"]["code"] == "invoice_not_payable"


def test_absent_unless_sandbox(app, client, auth, store):
    invoice = factories.make_invoice(store)
    sandbox = app.extensions["tender.settings"]
    app.extensions["tender.settings"] = dataclasses.replace(sandbox, swap_provider="oneclick")
    try:
        response = client.post(f"/v1/test_helpers/invoices/{invoice.public_id}/pay", json={}, headers=auth)
    finally:
        app.extensions["tender.settings"] = sandbox
    assert response.status_code == 404 and response.json["error"]["code"] == "route_not_found"


def test_status_object_rules_along_the_way(client, auth, store):
    invoice = factories.make_invoice(store)
    url = f"/v1/invoices/{invoice.public_id}/status"
    unpaid = client.get(url, headers=auth).json
    assert set(unpaid) == STATUS_FIELDS
    assert [unpaid[k] for k in ("swap_status", "paid_amount", "received_amount", "difference_amount", "paid_at")] == [None] * 5
    client.post(f"/v1/test_helpers/invoices/{invoice.public_id}/pay", json={}, headers=auth)
    from tests.payflow import poll_until_quiet

    poll_until_quiet("chain")                       # paid, the conversion still running
    processing = client.get(url, headers=auth).json
    assert (processing["status"], processing["swap_status"]) == ("paid", "processing")
    assert processing["paid_amount"] == "10.05" and processing["received_amount"] is None
    assert processing["transaction_hash"] and processing["paid_at"]
    poll_until_quiet("settlement")
    settled = client.get(url, headers=auth).json
    assert settled["swap_status"] is None and settled["received_amount"] == "10.00"
