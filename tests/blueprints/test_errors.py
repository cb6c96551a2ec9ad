"""Errors (docs/api.md#errors): JSON always, X-Request-Id on every response and in every error body,
64 KiB bodies, 404/405/413/500 as JSON."""
import io
import json

from flask import g
import pytest
from werkzeug.wsgi import get_content_length

from models.invoices import Invoice
from tests import factories
from tests.blueprints.assertions import REQUEST_ID, assert_error, assert_legacy_error

LIMIT = 64 * 1024


def padded_create_body(size: int) -> bytes:
    """A valid create body padded with trailing whitespace to exactly `size` bytes."""
    body = b'{"amount": "10.00"}'
    return body + b" " * (size - len(body))


def test_every_response_carries_a_fresh_request_id(client, auth):
    first = client.get("/v1/invoices", headers=auth)
    second = client.get("/health")
    for response in (first, second):
        assert REQUEST_ID.match(response.headers["X-Request-Id"])
    assert first.headers["X-Request-Id"] != second.headers["X-Request-Id"]


ERROR_REQUESTS = {
    "401": lambda c, auth, inv: c.get("/v1/invoices"),
    "403 legacy": lambda c, auth, inv: c.post("/v1/invoices", headers=auth, json={"amount": "1", "store_id": "x"}),
    "400 legacy": lambda c, auth, inv: c.post("/v1/invoices", headers=auth, data=b"{", content_type="application/json"),
    "400": lambda c, auth, inv: c.get("/v1/invoices?limit=0", headers=auth),
    "400 cursor": lambda c, auth, inv: c.get("/v1/invoices?starting_after=inv_" + "0" * 32, headers=auth),
    "400 cancel": lambda c, auth, inv: c.post(f"/v1/invoices/{inv}/cancel", headers=auth),
    "404": lambda c, auth, inv: c.get("/v1/invoices/inv_" + "0" * 32, headers=auth),
    "404 route": lambda c, auth, inv: c.get("/v2/nothing"),
    "405": lambda c, auth, inv: c.delete("/v1/invoices", headers=auth),
    "413": lambda c, auth, inv: c.post("/v1/invoices", headers=auth, data=padded_create_body(LIMIT + 1)),
}


@pytest.mark.parametrize("case", sorted(ERROR_REQUESTS))
def test_every_error_body_carries_the_request_id_of_its_header(client, auth, store, case):
    invoice = factories.make_invoice(store, status="paid").public_id
    response = ERROR_REQUESTS[case](client, auth, invoice)
    assert response.status_code >= 400
    assert response.mimetype == "application/json"
    body = response.get_json()
    request_id = body["details"]["request_id"] if "details" in body else body["error"]["request_id"]
    assert REQUEST_ID.match(request_id)
    assert request_id == response.headers["X-Request-Id"]


@pytest.mark.parametrize("path", ["/", "/v1", "/v1/invoice", "/v1/invoices/", "/v1/invoices/inv_x/refund",
                                  "/checkout/../../etc/passwd", "/v1/transactions/by-hash/"])
def test_unknown_routes_are_json_404(client, auth, path):
    assert_error(client.get(path, headers=auth), 404, "route_not_found")


@pytest.mark.parametrize("method, path, allowed", [
    ("delete", "/v1/invoices", {"GET", "POST"}),
    ("put", "/v1/invoices/inv_" + "a" * 32, {"GET"}),
    ("get", "/v1/invoices/inv_" + "a" * 32 + "/cancel", {"POST"}),
    ("post", "/v1/transactions", {"GET"}),
    ("post", "/health", {"GET"}),
])
def test_wrong_method_is_json_405_with_allow(client, auth, method, path, allowed):
    response = getattr(client, method)(path, headers=auth)
    assert_error(response, 405, "method_not_allowed")
    assert allowed <= set(response.headers["Allow"].replace(" ", "").split(","))


@pytest.mark.parametrize("path, allowed", [("/v1/invoices", ["GET", "HEAD", "OPTIONS", "POST"]),
                                           ("/health", ["GET", "HEAD", "OPTIONS"])])
def test_options_answers_the_routes_methods_as_json(client, path, allowed):
    response = client.options(path)
    assert response.status_code == 200 and response.mimetype == "application/json"
    assert response.json == {"methods": allowed}
    assert sorted(response.headers["Allow"].replace(" ", "").split(",")) == allowed


def test_body_over_64_kib_is_413_in_the_standard_shape(client, auth):
    response = client.post("/v1/invoices", headers=auth, data=padded_create_body(LIMIT + 1),
                           content_type="application/json")
    assert_error(response, 413, "request_too_large")
    assert Invoice.select().count() == 0


def test_body_of_exactly_64_kib_is_accepted(client, auth):
    response = client.post("/v1/invoices", headers=auth, data=padded_create_body(LIMIT),
                           content_type="application/json")
    assert response.status_code == 201


@pytest.mark.parametrize("size, status", [(LIMIT, 201), (LIMIT + 1, 413), (10 * LIMIT, 413)])
def test_streamed_body_without_content_length_is_held_to_64_kib(client, auth, size, status):
    # What gunicorn hands the app for `Transfer-Encoding: chunked`: the de-chunked body, no length,
    # and `wsgi.input_terminated`. Werkzeug cuts such a stream at the limit without a word.
    response = client.post("/v1/invoices", headers={**auth, "Transfer-Encoding": "chunked"},
                           input_stream=io.BytesIO(padded_create_body(size)), content_type="application/json",
                           environ_overrides={"wsgi.input_terminated": True})
    assert get_content_length(response.request.environ) is None
    assert response.status_code == status
    if status == 413:
        assert_error(response, 413, "request_too_large")
        assert Invoice.select().count() == 0


def test_unexpected_exception_is_a_json_500_with_the_request_id(app):
    # No route raises on purpose, so drive the registered handler the way Flask does for one that does.
    with app.test_request_context("/v1/invoices"):
        app.preprocess_request()
        response = app.make_response(app.handle_user_exception(RuntimeError("boom")))
        response = app.process_response(response)
        body = json.loads(response.get_data())
        assert response.status_code == 500
        assert body == {"error": {"type": "api_error", "code": "internal_error",
                                  "message": body["error"]["message"], "request_id": g.request_id}}
        assert "boom" not in response.get_data(as_text=True)
        assert response.headers["X-Request-Id"] == g.request_id


def test_validation_errors_name_the_first_bad_field(client, auth):
    body = assert_legacy_error(client.post("/v1/invoices", headers=auth, json={"amount": "x", "zzz": 1}),
                               400, "validation_error")
    assert body["details"]["param"] in {"amount", "zzz"}
    assert body["error"].startswith(body["details"]["param"] + ":")


def test_errors_are_never_html(client, auth):
    for response in (client.get("/nope"), client.delete("/v1/invoices", headers=auth),
                     client.post("/v1/invoices", headers=auth, data=b"<html>", content_type="text/html")):
        assert response.mimetype == "application/json"
        assert "<" not in response.get_data(as_text=True)


@pytest.mark.parametrize("path", ["/v1/payment-links//invoices", "/v1/invoices//status", "/v1//invoices"])
def test_an_empty_path_segment_is_a_json_404_not_a_redirect(client, auth, path):
    # An id left empty by the caller's code; werkzeug would redirect to the merged path with an HTML body.
    assert_error(client.get(path, headers=auth), 404, "route_not_found")
