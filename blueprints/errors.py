"""Every failure becomes JSON here, in the standard shape or, where docs/api.md#errors says, the legacy one.
The status is the error's class's (core/errors.py)."""
from __future__ import annotations

from functools import wraps
import logging

import peewee as pw
from flask import current_app, g, jsonify, request
from werkzeug.exceptions import HTTPException

from blueprints.requests import drain_body
from core.errors import (DomainError, InternalError, MethodNotAllowed, NotFound, PayloadTooLarge, Unavailable,
                             of_status)
from models.base import discard_connection

log = logging.getLogger("tender.errors")

def legacy_errors(*statuses):
    """Answer these statuses in the legacy `{error, code, details}` shape (create invoice
    and integration routes). 401 always stays standard. Read off the matched route, so a refusal
    before the view runs (a NUL in a header, a rate limit) has the route's shape too."""
    def decorator(view):
        view.legacy_statuses = frozenset(statuses) - {401}    # also read by apidoc/ for the error shapes
        return view
    return decorator


def _legacy_statuses() -> frozenset:
    view = current_app.view_functions.get(request.endpoint) if request.endpoint else None
    return getattr(view, "legacy_statuses", frozenset())


def validation_status(status, *, malformed_json_too: bool = False):
    """Body problems on this route answer `status` instead of 400: `validation_error`, and with
    `malformed_json_too` a body that is not a JSON object (`invalid_json`) as well (webhook
    endpoints: every body problem is a 422)."""
    codes = ("validation_error", "invalid_json") if malformed_json_too else ("validation_error",)

    def decorator(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            g.validation_status = (status, codes)
            return view(*args, **kwargs)
        wrapper.validation_status = status                       # read by apidoc/
        wrapper.validation_codes = codes
        return wrapper
    return decorator


def error_response(error: DomainError, *, headers: dict | None = None):
    """`error` as JSON with its class's status (a route may answer its validation errors with
    another: webhook endpoints' 422), in the legacy shape where the route keeps it."""
    status = error.status
    remapped_status, remapped_codes = g.get("validation_status", (status, ()))
    if error.code in remapped_codes:
        status = remapped_status
    request_id = g.get("request_id")
    if status in _legacy_statuses():
        body = {"error": error.message, "code": error.code,
                "details": {**error.details, **({"param": error.param} if error.param else {}),
                            "request_id": request_id}}
    else:
        fields = {"type": of_status(status).error_type, "code": error.code, "message": error.message,
                  "request_id": request_id}
        if error.param:
            fields["param"] = error.param
        if error.details:
            fields["details"] = error.details
        body = {"error": fields}
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
        return error_response(error, headers=headers)

    @app.errorhandler(HTTPException)
    def _http(error: HTTPException):
        if error.code == 404:
            return error_response(NotFound("route_not_found", "No such route."))
        if error.code == 405:
            allowed = ", ".join(sorted(error.valid_methods or []))
            return error_response(MethodNotAllowed("method_not_allowed",
                                                   f"Method not allowed; this route accepts {allowed}."),
                                  headers={"Allow": allowed})
        if error.code == 413:
            drain_body()
            return error_response(PayloadTooLarge("request_too_large", "Request bodies are limited to 64 KiB."))
        return error_response(of_status(error.code or 400)("invalid_request", error.description or "Bad request."))

    @app.errorhandler(pw.OperationalError)
    @app.errorhandler(pw.InterfaceError)
    def _database_down(error):
        # A broken pooled connection must not go back into the pool, or the next request fails too.
        log.error("database unavailable: %s", error)
        discard_connection()
        return _domain(Unavailable("service_unavailable", "The database is unavailable; retry shortly."))

    @app.errorhandler(Exception)
    def _unexpected(error):
        log.exception("unhandled error in request %s", g.get("request_id"))
        return error_response(InternalError("internal_error", "Something went wrong on our side."))
