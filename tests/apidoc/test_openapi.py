"""The OpenAPI document: every route is in it, and it says what the code does."""
import re

import pytest
import schemathesis

from apidoc.document import is_documented, openapi_path
from apidoc.operations import OPERATIONS
from models.events import EVENT_TYPES


@pytest.fixture
def document(client):
    response = client.get("/v1/openapi.json")
    assert response.status_code == 200 and response.mimetype == "application/json"
    return response.get_json()


def _routes(app):
    for rule in app.url_map.iter_rules():
        if is_documented(rule):
            for method in rule.methods - {"HEAD", "OPTIONS"}:
                yield method, rule


def test_every_route_is_documented(app, document):
    """No route ships undocumented: a new /v1 or /health route without an entry in
    apidoc/operations.py fails here, naming itself."""
    missing = [f"{method} {rule.rule}" for method, rule in _routes(app)
               if method.lower() not in document["paths"].get(openapi_path(rule.rule), {})]
    assert not missing, "add these to apidoc/operations.py: " + ", ".join(sorted(missing))


def test_no_operation_without_a_route(app):
    routes = {(method, rule.rule) for method, rule in _routes(app)}
    assert set(OPERATIONS) - routes == set()


def test_the_document_loads_in_an_openapi_tool(document):
    schema = schemathesis.openapi.from_dict(document)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == sum(len(item) for item in document["paths"].values()) >= 31
    assert document["openapi"] == "3.0.3"


def test_auth_and_errors_follow_the_views_decorators(app, document):
    keyed = public = 0
    for method, rule in _routes(app):
        operation = document["paths"][openapi_path(rule.rule)][method.lower()]
        scopes = getattr(app.view_functions[rule.endpoint], "required_scopes", None)
        if scopes:
            keyed += 1
            assert operation["security"] == [{"bearerAuth": []}]
            assert operation["x-scopes"] == list(scopes)
            assert {"401", "403", "429", "500"} <= set(operation["responses"])
            assert operation["responses"]["401"]["content"]["application/json"]["schema"]["$ref"].endswith("/Error")
        else:
            public += 1
            assert operation["security"] == []
            assert "401" not in operation["responses"]
        if rule.arguments:
            assert "404" in operation["responses"]
    assert keyed >= 28 and public >= 4


def _shape(document, path, method, status):
    return document["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"]["$ref"]


def test_each_route_names_its_error_shape(document):
    for status in ("400", "403", "429"):
        assert _shape(document, "/v1/invoices", "post", status).endswith("/LegacyError")
    assert _shape(document, "/v1/invoices", "post", "401").endswith("/Error")
    assert _shape(document, "/v1/invoices", "post", "413").endswith("/Error")
    assert _shape(document, "/v1/payment-links", "post", "400").endswith("/Error")
    # Webhook endpoint bodies answer 422 (docs/webhooks.md); bad JSON stays 400.
    assert {"400", "422"} <= set(document["paths"]["/v1/webhook-endpoints"]["post"]["responses"])
    assert "422" not in document["paths"]["/v1/payment-links"]["post"]["responses"]


def test_the_documented_error_shapes_are_the_ones_the_app_sends(client, auth, document):
    legacy = client.post("/v1/invoices", headers=auth, json={"amount": 5})
    standard = client.post("/v1/payment-links", headers=auth, json={"amount": 5})
    legacy_schema = document["components"]["schemas"]["LegacyError"]
    standard_schema = document["components"]["schemas"]["Error"]
    assert legacy.status_code == standard.status_code == 400
    assert set(legacy.get_json()) == set(legacy_schema["required"])
    assert set(standard.get_json()["error"]) <= set(standard_schema["properties"]["error"]["properties"])
    assert re.match(standard_schema["properties"]["error"]["properties"]["request_id"]["pattern"],
                    standard.get_json()["error"]["request_id"])


def test_parameters_headers_and_links(document):
    create_link = document["paths"]["/v1/payment-links"]["post"]
    assert {"$ref": "#/components/parameters/IdempotencyKey"} in create_link["parameters"]
    assert "Idempotent-Replayed" in create_link["responses"]["201"]["headers"]
    assert create_link["responses"]["201"]["links"]["GetPaymentLink"]["operationId"] == "get_payment_link"
    listing = document["paths"]["/v1/invoices"]["get"]
    names = {parameter["name"] for parameter in listing["parameters"]}
    assert {"limit", "starting_after", "ending_before", "status", "created_after", "paid_before"} <= names
    assert "RateLimit-Remaining" in listing["responses"]["200"]["headers"]
    assert "Retry-After" in listing["responses"]["429"]["headers"]
    assert document["paths"]["/v1/invoices/{invoice_id}"]["get"]["parameters"][0]["in"] == "path"
    assert "Retry-After" in document["paths"]["/v1/public/payment-links/{token}/checkout"]["post"]["responses"]["503"]["headers"]


def test_webhook_payloads_and_headers_are_documented(document):
    assert set(document["x-webhooks"]) == set(EVENT_TYPES)
    delivery = document["x-webhooks"]["invoice.paid"]["post"]
    assert {"$ref": "#/components/parameters/X-Tender-Signature"} in delivery["parameters"]
    assert delivery["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/Event")
    event = document["components"]["schemas"]["Event"]
    assert event["properties"]["data"]["$ref"].endswith("/EventData")


def test_the_docs_page_is_served_by_the_app_with_nothing_from_elsewhere(client):
    page = client.get("/docs")
    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    assert "http://" not in html and "https://" not in html
    for src in re.findall(r'(?:src|href)="([^"]+)"', html):
        assert client.get(src).status_code == 200, src
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    unknown = client.get("/docs/assets/index.html")
    assert unknown.status_code == 404 and unknown.get_json()["error"]["code"] == "route_not_found"


def test_idempotency_keys_are_documented_as_kept_per_api_key(document):
    described = document["components"]["parameters"]["IdempotencyKey"]["description"]
    assert "per API key" in described and "per store" not in described
    assert "newly issued" not in described          # a replay shows the first secret again


def test_a_shape_nested_in_a_request_body_keeps_the_required_its_schema_declares(client, auth, document):
    """Only answers send every field; a PATCH's nested `kinds` takes any of them (the contract fuzzer
    found a partial update the document called invalid while the API accepted it)."""
    kinds = document["components"]["schemas"]["NotificationKindsUpdate"]
    assert "required" not in kinds
    assert len(document["components"]["schemas"]["NotificationKinds"]["required"]) == len(kinds["properties"])
    answer = client.patch("/v1/store/notifications", json={"kinds": {"payment_received": False}}, headers=auth)
    assert answer.status_code == 200, answer.json
