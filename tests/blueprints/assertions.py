"""Shared by the API tests: the documented field sets, reading a list page, and the two error shapes
of docs/api.md#errors."""
from __future__ import annotations

import re

from playhouse.test_utils import count_queries

# docs/api.md#errors, written out here rather than imported, so the tests check the mapping in the code.
TYPE_BY_STATUS = {
    400: "invalid_request", 401: "authentication_error", 403: "permission_error", 404: "not_found",
    405: "invalid_request", 408: "invalid_request", 409: "conflict", 413: "invalid_request", 422: "unprocessable_entity",
    429: "rate_limited", 500: "api_error", 503: "service_unavailable",
}
REQUEST_ID = re.compile(r"^req_[0-9a-f]{32}$")
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

# The API's resources, every field always present (docs/api.md#money-strings-and-sizes).
INVOICE_FIELDS = {
    "id", "external_order_id", "status", "amount", "currency", "order_amount", "order_currency",
    "paid_amount", "refunded_amount", "output_asset", "checkout_url", "payment_url", "return_url", "customer_id",
    "payment_link_id", "transaction_hash", "metadata", "created_at", "updated_at", "paid_at", "expires_at",
    "exchange_rate", "payout_amount", "fee_bps", "fee_amount",
}
STATUS_FIELDS = {
    "id", "status", "swap_status", "paid_amount", "received_amount", "difference_amount", "transaction_hash",
    "paid_at", "deposit_address", "deposit_memo", "return_url", "exchange_rate", "payout_amount", "fee_bps",
    "fee_amount",
}
TRANSACTION_FIELDS = {
    "id", "invoice_id", "type", "refund_id", "network", "token", "amount", "transaction_hash", "from_wallet", "to_wallet",
    "confirmations", "status", "verified", "confirmed_at", "created_at", "updated_at",
}
REFUND_FIELDS = {
    "id", "invoice_id", "status", "amount", "currency", "reason", "asset", "refund_to", "estimated_amount_out",
    "amount_out", "transaction_hash", "failure_reason", "recipient", "funding", "funding_url", "created_at", "updated_at",
    "completed_at",
}
FUNDING_FIELDS = {
    "asset", "amount", "deposit_address", "deposit_memo", "expires_at", "received_amount", "transaction_hash",
    "returned_amount", "return_transaction_hash",
}


def list_page(client, auth, path: str, **query) -> dict:
    """A page of a list route, which must answer 200."""
    response = client.get(path, headers=auth, query_string=query)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def ids(page: dict) -> list[str]:
    """The page's ids, in its order."""
    return [item["id"] for item in page["data"]]


def assert_no_query_per_row(client, auth, path: str, *, rows: int) -> None:
    """A page of `rows` rows costs as many SQL queries as a page of one (the store has `rows` or more)."""
    def queries_for(limit):
        with count_queries() as counter:
            assert len(list_page(client, auth, path, limit=limit)["data"]) == limit
        return counter.count

    queries_for(1)                      # the key lookup is cached for a second from here on
    assert queries_for(1) == queries_for(rows)


def assert_error(response, status: int, code: str, *, param: str | None = None) -> dict:
    """The standard shape `{"error": {type, code, message, request_id[, param]}}`."""
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/json"
    body = response.get_json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert {"type", "code", "message", "request_id"} <= set(error), error
    assert error["code"] == code, error
    assert error["type"] == TYPE_BY_STATUS[status], error
    assert isinstance(error["message"], str) and error["message"]
    assert REQUEST_ID.match(error["request_id"])
    assert error["request_id"] == response.headers["X-Request-Id"]
    if param is not None:
        assert error.get("param") == param, error
    return error


def assert_legacy_error(response, status: int, code: str, *, param: str | None = None) -> dict:
    """The legacy shape `{"error": message, "code", "details": {}}` (create invoice, integrations)."""
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/json"
    body = response.get_json()
    assert set(body) == {"error", "code", "details"}, body
    assert isinstance(body["error"], str) and body["error"]
    assert body["code"] == code, body
    assert isinstance(body["details"], dict)
    assert body["details"]["request_id"] == response.headers["X-Request-Id"]
    if param is not None:
        assert body["details"].get("param") == param, body
    return body
