"""The refusals the API reports (docs/api.md#errors), as classes that carry their HTTP status.

A refusal has a stable `code` (what clients branch on), a message for humans, and maybe the
parameter at fault. Its class says the status; each class lists the codes it answers with, which
is all the API reference needs (apidoc/) and what a test holds every raise in the code to.
blueprints/errors.py only renders them.
"""
from __future__ import annotations


class DomainError(Exception):
    status = 400
    error_type = "invalid_request"         # the body's `type`, one per status
    codes: tuple[str, ...] = ()

    def __init_subclass__(cls, *, status: int | None = None, error_type: str | None = None,
                          codes: tuple[str, ...] = (), **kwargs):
        """The refusals below name their status, body `type` and codes in their class line; a
        subclass of one of them (an error with its own headers, say) keeps its parent's."""
        super().__init_subclass__(**kwargs)
        if status is not None:
            cls.status, cls.error_type, cls.codes = status, error_type, codes

    def __init__(self, code: str, message: str, *, param: str | None = None, details: dict | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.param = param
        self.details = details or {}


class BadRequest(DomainError, status=400, error_type="invalid_request", codes=(
        "validation_error", "invalid_json", "invalid_cursor", "payout_wallet_not_configured",
        "invoice_not_cancellable", "activation_refused", "pricing_locked", "amount_out_of_range",
        "idempotency_key_reused", "unsupported_asset", "invoice_not_payable", "invoice_expiring",
        "invoice_not_refundable", "refund_exceeds_refundable", "refund_not_cancellable")):
    """The request itself is wrong, or asks for something the object's state does not allow."""


class Unauthorized(DomainError, status=401, error_type="authentication_error",
                   codes=("missing_api_key", "invalid_api_key", "invalid_operator_credentials")):
    """No credentials, or ones Tender does not know."""


class Forbidden(DomainError, status=403, error_type="permission_error", codes=(
        "INSUFFICIENT_SCOPE", "store_mismatch", "integration_key_forbidden", "payment_link_already_paid",
        "payment_link_unavailable")):
    """Known credentials that may not do this."""


class NotFound(DomainError, status=404, error_type="not_found", codes=(
        "invoice_not_found", "transaction_not_found", "payment_link_not_found", "webhook_endpoint_not_found",
        "webhook_delivery_not_found", "event_not_found", "integration_not_found", "route_not_found",
        "refund_not_found", "store_not_found", "api_key_not_found")):            # the last two: the operator CLI's
    """No such object in the caller's store: another store's object is answered the same way."""

    def __init__(self, code: str, message: str = "No such object."):
        super().__init__(code, message)


class MethodNotAllowed(DomainError, status=405, error_type="invalid_request", codes=("method_not_allowed",)):
    """The path exists; the method does not."""


class RequestTimeout(DomainError, status=408, error_type="invalid_request", codes=("request_timeout",)):
    """The body did not arrive in time (`REQUEST_BODY_TIMEOUT_SECONDS`); nothing of it was used."""


class Conflict(DomainError, status=409, error_type="conflict", codes=(
        "idempotency_key_in_use", "EXTERNAL_ORDER_INTEGRATION_CONFLICT", "INTEGRATION_SITE_CONFLICT",
        "invoice_not_cancellable", "invoice_already_committed", "refund_not_cancellable")):
    """Another request holds or already made what this one asks for."""


class PayloadTooLarge(DomainError, status=413, error_type="invalid_request", codes=("request_too_large",)):
    """The body is over the size limit."""


class Unprocessable(DomainError, status=422, error_type="unprocessable_entity",
                    codes=("invalid_webhook_url", "unknown_event_type", "webhook_endpoint_limit")):
    """Well-formed, but not a webhook endpoint Tender can accept."""


class TooManyRequests(DomainError, status=429, error_type="rate_limited", codes=("rate_limited",)):
    """Over the store's rate limit; `Retry-After` says when to try again."""


class InternalError(DomainError, status=500, error_type="api_error", codes=("internal_error",)):
    """A bug of Tender's; the request id in the body finds it in the logs."""


class Unavailable(DomainError, status=503, error_type="service_unavailable",
                  codes=("checkout_unavailable", "service_unavailable", "provider_unavailable",
                         "exchange_rate_unavailable")):
    """Something Tender needs (the database, Redis, the swap provider) did not answer; the same
    request may be repeated after `retry_after` seconds (the `Retry-After` header)."""

    def __init__(self, code: str, message: str, *, retry_after: int = 5):
        super().__init__(code, message)
        self.retry_after = retry_after


REFUSALS = (BadRequest, Unauthorized, Forbidden, NotFound, MethodNotAllowed, RequestTimeout, Conflict,
            PayloadTooLarge, Unprocessable, TooManyRequests, InternalError, Unavailable)


def of_status(status: int) -> type[DomainError]:
    """The class answering with `status` (an HTTP error raised by Flask itself, say)."""
    return next((refusal for refusal in REFUSALS if refusal.status == status), BadRequest)


def validation_error(param: str, message: str) -> BadRequest:
    return BadRequest("validation_error", f"{param}: {message}", param=param)
