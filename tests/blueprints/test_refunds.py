"""The refund routes' answers and refusals (docs/refunds.md): shapes, validation, scopes, lists, cancel."""
import dataclasses

import pytest

from tests import factories
from tests.blueprints.assertions import FUNDING_FIELDS, REFUND_FIELDS, assert_error
from tests.payflow import run_pipeline


@pytest.fixture
def paid(client, auth):
    invoice = client.post("/v1/invoices", json={"amount": "30.00"}, headers=auth).json
    client.post(f"/v1/test_helpers/invoices/{invoice['id']}/pay", json={"origin_asset": "usdc.base"}, headers=auth)
    run_pipeline()
    return invoice


def create(client, auth, invoice_id, **body):
    return client.post(f"/v1/invoices/{invoice_id}/refunds", json={"amount": "10.00", **body}, headers=auth)


def test_every_documented_field(client, auth, paid):
    body = create(client, auth, paid["id"]).json
    assert set(body) == REFUND_FIELDS and set(body["funding"]) == FUNDING_FIELDS
    assert body["id"].startswith("ref_") and len(body["id"]) == 36
    assert body["invoice_id"] == paid["id"] and body["reason"] is None and body["completed_at"] is None
    assert client.get(f"/v1/refunds/{body['id']}", headers=auth).json == body


@pytest.mark.parametrize("body, code, param", [
    ({"amount": 10}, "validation_error", "amount"),
    ({"amount": "0"}, "validation_error", "amount"),
    ({"amount": "10.001"}, "validation_error", "amount"),
    ({"amount": "30.01"}, "refund_exceeds_refundable", "amount"),
    ({"reason": "x" * 501}, "validation_error", "reason"),
    ({"colour": "red"}, "validation_error", "colour"),
    ({"asset": "doge"}, "unsupported_asset", "asset"),
    ({"asset": "btc"}, "validation_error", "refund_to"),                 # another network: an address is needed
    ({"asset": "btc", "refund_to": "0x" + "a" * 40}, "validation_error", "refund_to"),
    ({"refund_to": "not an address"}, "validation_error", "refund_to"),
])
def test_bad_input(client, auth, paid, body, code, param):
    assert_error(create(client, auth, paid["id"], **body), 400, code, param=param)


def test_another_asset_and_address(client, auth, paid):
    body = create(client, auth, paid["id"], asset="sol", refund_to="7" * 44).json
    assert (body["asset"], body["refund_to"]) == ("sol", "7" * 44)
    same_network = create(client, auth, paid["id"], asset="usdc.base").json        # the buyer's address reused
    assert same_network["refund_to"].startswith("0x")


def test_scopes(client, store, paid):
    reader = {"Authorization": f"Bearer {factories.make_key(store, scopes=['refunds:read'])}"}
    assert_error(create(client, reader, paid["id"]), 403, "INSUFFICIENT_SCOPE")
    invoices_only = {"Authorization": f"Bearer {factories.make_key(store, scopes=['invoices:read'])}"}
    assert_error(client.get("/v1/refunds", headers=invoices_only), 403, "INSUFFICIENT_SCOPE")
    assert client.get("/v1/refunds", headers=reader).status_code == 200


def test_lists_filters_and_pages(client, auth, paid):
    first = create(client, auth, paid["id"], amount="1.00").json
    second = create(client, auth, paid["id"], amount="2.00").json
    client.post(f"/v1/refunds/{first['id']}/cancel", headers=auth)
    page = client.get("/v1/refunds", headers=auth, query_string={"limit": 1}).json
    assert [r["id"] for r in page["data"]] == [second["id"]] and page["has_more"] is True
    rest = client.get("/v1/refunds", headers=auth, query_string={"starting_after": page["next_cursor"]}).json
    assert [r["id"] for r in rest["data"]] == [first["id"]] and rest["has_more"] is False
    cancelled = client.get("/v1/refunds", headers=auth, query_string={"status": "cancelled"}).json["data"]
    assert [r["id"] for r in cancelled] == [first["id"]]
    by_invoice = client.get("/v1/refunds", headers=auth, query_string={"invoice_id": paid["id"]}).json["data"]
    assert len(by_invoice) == 2
    of_invoice = client.get(f"/v1/invoices/{paid['id']}/refunds", headers=auth,
                            query_string={"status": "awaiting_funds"}).json["data"]
    assert [r["id"] for r in of_invoice] == [second["id"]]
    assert_error(client.get("/v1/refunds", headers=auth, query_string={"status": "done"}), 400, "validation_error",
                 param="status")
    assert_error(client.get("/v1/refunds", headers=auth, query_string={"starting_after": "ref_" + "0" * 32}),
                 400, "invalid_cursor", param="starting_after")


def test_cancel_only_while_unfunded(client, auth, paid):
    refund = create(client, auth, paid["id"]).json
    assert client.post(f"/v1/refunds/{refund['id']}/cancel", headers=auth).json["status"] == "cancelled"
    assert_error(client.post(f"/v1/refunds/{refund['id']}/cancel", headers=auth), 400, "refund_not_cancellable")
    funded = create(client, auth, paid["id"]).json
    client.post(f"/v1/test_helpers/refunds/{funded['id']}/fund", json={}, headers=auth)
    # The provider already knows the funding: recorded, and the cancel refused.
    assert_error(client.post(f"/v1/refunds/{funded['id']}/cancel", headers=auth), 409, "refund_not_cancellable")
    assert client.get(f"/v1/refunds/{funded['id']}", headers=auth).json["status"] == "processing"


def test_idempotent_create(client, auth, paid):
    headers = {**auth, "Idempotency-Key": "refund-order-7"}
    first = client.post(f"/v1/invoices/{paid['id']}/refunds", json={"amount": "10.00"}, headers=headers)
    again = client.post(f"/v1/invoices/{paid['id']}/refunds", json={"amount": "10.00"}, headers=headers)
    assert first.status_code == again.status_code == 201 and first.json == again.json
    assert again.headers["Idempotent-Replayed"] == "true"
    assert len(client.get("/v1/refunds", headers=auth).json["data"]) == 1


def test_unknown_refund(client, auth):
    assert_error(client.get("/v1/refunds/ref_" + "0" * 32, headers=auth), 404, "refund_not_found")
    assert_error(client.get("/v1/refunds/inv_" + "0" * 32, headers=auth), 404, "refund_not_found")


def test_fund_helper_is_sandbox_only_and_checks_its_body(app, client, auth, paid):
    refund = create(client, auth, paid["id"]).json
    url = f"/v1/test_helpers/refunds/{refund['id']}/fund"
    assert_error(client.post(url, json={"outcome": "lost"}, headers=auth), 400, "validation_error", param="outcome")
    sandbox = app.extensions["tender.settings"]
    app.extensions["tender.settings"] = dataclasses.replace(sandbox, swap_provider="oneclick")
    try:
        response = client.post(url, json={}, headers=auth)
    finally:
        app.extensions["tender.settings"] = sandbox
    assert_error(response, 404, "route_not_found")


def test_the_funding_view_and_page(client, auth, paid):
    refund = create(client, auth, paid["id"], reason="secret note").json
    view = client.get(f"/v1/public/refunds/{refund['id']}").json
    assert set(view) == {"id", "status", "amount", "currency", "store_name", "recipient", "funding"}
    assert view["funding"] == refund["funding"]
    # The merchant checks who receives it before funding: the asset and the buyer's address, shortened.
    short = refund["refund_to"][:6] + "…" + refund["refund_to"][-4:]
    assert view["recipient"] == refund["recipient"] == {"asset": refund["asset"], "address": short}
    page = client.get(f"/fund/{refund['id']}")
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and refund["funding"]["deposit_address"] in text
    assert short in text and refund["asset"] in text
    assert "secret note" not in text and refund["refund_to"] not in text
    qr = client.get(f"/fund/{refund['id']}/qr.svg")
    assert qr.status_code == 200 and qr.mimetype == "image/svg+xml"
    assert client.get("/fund/ref_" + "0" * 32).status_code == 404
