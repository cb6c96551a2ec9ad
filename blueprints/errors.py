"""Every failure becomes JSON here, in the standard shape or, where docs/api.md#errors says, the legacy one."""
from __future__ import annotations

import logging
from functools import wraps

import peewee as pw
from flask import g, jsonify
from werkzeug.exceptions import HTTPException

from blueprints.requests import drain_body
from models.base import discard_connection
from services.errors import DomainError, Unavailable

log = logging.getLogger("tender.errors")

STATUS_BY_CODE = {
    "missing_api_key": 401, "invalid_api_key": 401, "invalid_operator_credentials": 401,
    "INSUFFICIENT_SCOPE": 403, "store_mismatch": 403, "integration_key_forbidden": 403,
    "payment_link_already_paid": 403, "payment_link_unavailable": 403,
    "invoice_not_found": 404, "transaction_not_found": 404, "payment_link_not_found": 404,
    "webhook_endpoint_not_found": 404, "webhook_delivery_not_found": 404, "event_not_found": 404,
    "integration_not_found": 404, "route_not_found": 404,
    "validation_error": 400, "invalid_json": 400, "invalid_cursor": 400, "payout_wallet_not_configured": 400,
    "invoice_not_cancellable": 400, "activation_refused": 400, "pricing_locked": 400,
    "amount_out_of_range": 400, "idempotency_key_reused": 400, "unsupported_asset": 400,
    "invoice_not_payable": 400, "invoice_expiring": 400,
    "method_not_allowed": 405, "request_too_large": 413,
    "idempotency_key_in_use": 409, "EXTERNAL_ORDER_INTEGRATION_CONFLICT": 409, "INTEGRATION_SITE_CONFLICT": 409,
    "invalid_webhook_url": 422, "unknown_event_type": 422, "webhook_endpoint_limit": 422,
    "rate_limited": 429, "internal_error": 500,
    "checkout_unavailable": 503, "service_unavailable": 503, "provider_unavailable": 503,
}
TYPE_BY_STATUS = {
    400: "invalid_request", 401: "authentication_error", 403: "permission_error", 404: "not_found",
    405: "invalid_request", 409: "conflict", 413: "invalid_request", 422: "unprocessable_entity",
    429: "rate_limited", 500: "api_error", 503: "service_unavailable",
}


def legacy_errors(*statuses):
    """Answer these statuses in the legacy `{error, code, details}` shape (create invoice
    and integration routes). 401 always stays standard."""
    def decorator(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            g.legacy_statuses = frozenset(statuses) - {401}
            return view(*args, **kwargs)
        wrapper.legacy_statuses = frozenset(statuses) - {401}    # read by apidoc/ for the error shapes
        return wrapper
    return decorator


def validation_status(status):
    """Body problems on this route answer `status` instead of 400 (webhook endpoints: 422)."""
    def decorator(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            g.validation_status = status
            return view(*args, **kwargs)
        wrapper.validation_status = status                       # read by apidoc/
        return wrapper
    return decorator


def error_response(code: str, message: str, *, status: int | None = None, param: str | None = None,
                   details: dict | None = None, headers: dict | None = None):
    status = status or STATUS_BY_CODE.get(code, 400)
    if code == "validation_error":
        status = g.get("validation_status", status)
    request_id = g.get("request_id")
    if status in g.get("legacy_statuses", ()):
        body = {"error": message, "code": code,
                "details": {**(details or {}), **({"param": param} if param else {}), "request_id": request_id}}
    else:
        error = {"type": TYPE_BY_STATUS.get(status, "invalid_request"), "code": code, "message": message,
                 "request_id": request_id}
        if param:
            error["param"] = param
        if details:
            error["details"] = details
        body = {"error": error}
    response = jsonify(body)
    response.status_code = status
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def register_error_handlers(app):
    @app.errorhandler(DomainError)
    def _domain(error: DomainError):
        headers = dict(getattr(error, "headers", None) or {})   # e.g. WWW-Authenticate
        if isinstance(error, Unavailable):
            headers["Retry-After"] = str(error.retry_after)
        return error_response(error.code, error.message, status=getattr(error, "status", None), param=error.param,
                              details=error.details, headers=headers)

    @app.errorhandler(HTTPException)
    def _http(error: HTTPException):
        if error.code == 404:
            return error_response("route_not_found", "No such route.")
        if error.code == 405:
            allowed = ", ".join(sorted(error.valid_methods or []))
            return error_response("method_not_allowed", f"Method not allowed; this route accepts {allowed}.",
                                  headers={"Allow": allowed})
        if error.code == 413:
            drain_body()
            return error_response("request_too_large", "Request bodies are limited to 64 KiB.")
        return error_response("invalid_request", error.description or "Bad request.", status=error.code or 400)

    @app.errorhandler(pw.OperationalError)
    @app.errorhandler(pw.InterfaceError)
    def _database_down(error):
        # A broken pooled connection must not go back into the pool, or the next request fails too.
        log.error("database unavailable: %s", error)
        discard_connection()
        return error_response("service_unavailable", "The database is unavailable; retry shortly.",
                              headers={"Retry-After": "5"})

    @app.errorhandler(Exception)
    def _unexpected(error):
        log.exception("unhandled error in request %s", g.get("request_id"))
        return error_response("internal_error", "Something went wrong on our side.")
