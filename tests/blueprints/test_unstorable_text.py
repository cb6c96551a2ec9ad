"""Text no database can hold (a NUL byte, an unpaired UTF-16 surrogate) is refused at one boundary,
in the body, the query, the path and the headers: 400 `validation_error` naming the parameter, on
both databases (PostgreSQL answered 500 before: docs/api.md#errors)."""
import json

import pytest

from tests import factories

LONE = "\\ud800"          # as JSON text: an escape json.loads turns into an unpaired surrogate
NUL = "\\u0000"


def _post(client, path, auth, raw_fields: str):
    return client.post(path, headers={**auth, "Content-Type": "application/json"}, data="{" + raw_fields + "}")


def _param(response):
    body = response.json
    return body["details"]["param"] if "details" in body else body["error"]["param"]


@pytest.mark.parametrize("bad", [LONE, NUL, "\\udfff", "ok" + NUL])
def test_invoice_external_order_id(client, auth, bad):
    response = _post(client, "/v1/invoices", auth, f'"amount": "10.00", "external_order_id": "{bad}"')
    assert response.status_code == 400 and response.json["code"] == "validation_error"
    assert _param(response) == "external_order_id"


def test_nested_metadata_values_and_keys(client, auth):
    value = _post(client, "/v1/invoices", auth, f'"amount": "10.00", "metadata": {{"cart": "a{NUL}"}}')
    assert value.status_code == 400 and _param(value) == "metadata.cart"
    key = _post(client, "/v1/invoices", auth, f'"amount": "10.00", "metadata": {{"c{LONE}": "x"}}')
    assert key.status_code == 400 and _param(key) == "metadata.c\\ud800"


def test_a_surrogate_pair_is_one_character_and_welcome(client, auth):
    response = _post(client, "/v1/invoices", auth, '"amount": "10.00", "external_order_id": "order-\\ud83d\\ude00"')
    assert response.status_code == 201, response.json
    fetched = client.get(f"/v1/invoices/{response.json['id']}", headers=auth).json
    assert fetched["external_order_id"] == "order-\U0001F600"


def test_payment_link_title_and_checkout_refund_to(client, auth, store):
    response = _post(client, "/v1/payment-links", auth, f'"title": "{LONE}", "amount_mode": "fixed_amount", '
                                                         '"amount": "5.00", "currency": "USD"')
    assert response.status_code == 400 and _param(response) == "title"
    link = factories.make_payment_link(store)
    checkout = client.post(f"/v1/public/payment-links/{link.plpub_id}/checkout",
                           headers={"Content-Type": "application/json"},
                           data='{"origin_asset": "usdc.eth", "refund_to": "0x' + LONE + '"}')
    assert checkout.status_code == 400 and _param(checkout) == "refund_to"


def test_webhook_endpoint_name_keeps_its_routes_422(client, auth):
    response = _post(client, "/v1/webhook-endpoints", auth, f'"url": "https://93.184.216.34/h", "name": "{LONE}"')
    assert response.status_code == 422 and response.json["error"]["code"] == "validation_error"
    assert _param(response) == "name"


@pytest.mark.parametrize("path, param", [
    ("/v1/invoices?external_order_id=%00", "external_order_id"),
    ("/v1/invoices?status=pending&customer_id=a%00b", "customer_id"),
    ("/v1/transactions/by-hash/%00", "transaction_hash"),
    ("/v1/invoices/inv_%00", "invoice_id"),
])
def test_query_parameters_and_path_segments(client, auth, path, param):
    response = client.get(path, headers=auth)
    assert response.status_code == 400, response.json
    assert response.json["error"]["code"] == "validation_error" and response.json["error"]["param"] == param


def test_a_header_value(client, auth):
    response = client.post("/v1/invoices", headers={**auth, "Idempotency-Key": "key\x00"},
                           json={"amount": "10.00"})
    assert response.status_code == 400 and _param(response) == "Idempotency-Key"


def test_the_body_parser_is_the_only_parser():
    """Every route reads its JSON through blueprints/requests.py, where the check lives."""
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[2] / "blueprints"
    readers = [path.name for path in root.glob("*.py")
               if path.name != "requests.py"
               and ("request.get_json(" in path.read_text() or "request.json" in path.read_text())]
    assert readers == []
    assert json.loads('"\\ud800"') == "\ud800"        # what the check is for: json accepts it
