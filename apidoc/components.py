"""The parts of the document shared by every operation: auth, error shapes, headers, webhook headers."""
from core.errors import REFUSALS

RATE_LIMIT_HEADERS = ("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset")
WEBHOOK_HEADERS = ("X-Tender-Event-Id", "X-Tender-Event-Type", "X-Tender-Delivery-Id", "X-Tender-Timestamp",
                   "X-Tender-Signature", "X-Tender-Integration-Id", "User-Agent", "webhook-id", "webhook-timestamp",
                   "webhook-signature")
METADATA_TEXT = ("Flat object of at most 50 keys (40 characters each); values are strings (500 characters at "
                 "most), numbers, booleans or null. Keys that look like secrets (any case or separator: "
                 "`cardNumber`, `card_number`) and values holding an API key or webhook secret are dropped.")

DESCRIPTION = """Tender lets a store accept on-chain payments: invoices, payment links, transactions, webhooks.

**Authentication**: `Authorization: Bearer sk_live_…` on every route except `/health`, the
`/v1/public/…` buyer routes and this document. Each operation lists the scopes it accepts.

**Errors** come in the standard shape `{"error": {type, code, message, request_id, param?}}`;
create invoice (400/403/409/429) answers in the legacy shape `{error, code, details}`; each
response names its shape. 401 is always standard. Another store's object is a 404, never a 403.

**Rate limits**: fixed one-minute windows per API key (writes enforced, reads observed) and per
client IP on the public routes (checkout also per `plpub_` token). Limited routes answer with
`RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`; a 429 adds `Retry-After`.

**Webhooks**: see `x-webhooks` (one entry per event type). Every delivery is a POST of the Event
object, signed: `X-Tender-Signature: v1=<hex HMAC-SHA256(secret, "{X-Tender-Timestamp}.{raw body}")>`
(two comma-separated `v1=` values for 24 hours after a rotation), and also with the Standard Webhooks
headers `webhook-id`, `webhook-timestamp`, `webhook-signature`. Refuse timestamps more than 300 s
off, dedupe on `X-Tender-Event-Id`, and re-fetch the invoice before acting.
"""

_CODES = {refusal.status: [f"`{code}`" for code in refusal.codes] for refusal in REFUSALS}
_ALL_CODES = sorted({code for refusal in REFUSALS for code in refusal.codes})
ERROR_TEXT = {
    400: "Bad request: " + ", ".join(_CODES[400]) + ".",
    401: "Missing, unknown, revoked or expired API key: `missing_api_key`, `invalid_api_key`.",
    403: "Forbidden: `INSUFFICIENT_SCOPE` (the key lacks the scope), or a rule of the route.",
    404: "Not found (also another store's object, or an id of the wrong shape): " + ", ".join(_CODES[404]) + ".",
    408: "`request_timeout`: the body did not arrive within `REQUEST_BODY_TIMEOUT_SECONDS` (10) of the "
         "request's start; nothing of it was used.",
    413: "`request_too_large`: bodies are limited to 64 KiB.",
    414: "`request_too_large`: the request line is longer than the server reads (gunicorn's limit).",
    431: "`request_too_large`: a header, or all of them, is larger than the server reads (gunicorn's limits).",
    "head_timeout": "`request_timeout`: the headers did not arrive within `REQUEST_HEADER_TIMEOUT_SECONDS` (10).",
    429: "`rate_limited`: too many requests in this window; see `Retry-After`.",
    500: "`internal_error`: an unexpected failure on our side (a bug: please report the request id).",
    503: "`service_unavailable`: the database is unreachable; retry after `Retry-After` seconds.",
    "idempotency_reused": "`idempotency_key_reused`: this Idempotency-Key came with another request in the "
                          "last 24 hours.",
    "idempotency_in_use": "`idempotency_key_in_use`: a request with this Idempotency-Key is still running "
                          "(or, on a replay, the secret it issued has been replaced since).",
    "characters": "`validation_error`: a query parameter, path segment or header holds a NUL byte or a lone "
                  "surrogate.",
    "body": "The body failed validation on this route: `validation_error`, `invalid_webhook_url`, "
            "`unknown_event_type`, `webhook_endpoint_limit`.",
}

_STANDARD_ERROR = {
    "type": "object", "required": ["error"], "additionalProperties": False,
    "properties": {"error": {
        "type": "object", "required": ["type", "code", "message", "request_id"],
        "properties": {
            "type": {"type": "string", "enum": sorted({refusal.error_type for refusal in REFUSALS})},
            "code": {"type": "string", "enum": _ALL_CODES},
            "message": {"type": "string"},
            "request_id": {"type": "string", "pattern": "^req_[0-9a-f]{32}$"},
            "param": {"type": "string", "description": "The field at fault, when there is one."},
            "details": {"type": "object"},
        },
    }},
}
_LEGACY_ERROR = {
    "type": "object", "required": ["error", "code", "details"], "additionalProperties": False,
    "description": "The legacy shape, kept for older integrations (spec: Errors).",
    "properties": {
        "error": {"type": "string", "description": "The message."},
        "code": {"type": "string", "enum": _ALL_CODES},
        "details": {"type": "object", "required": ["request_id"], "properties": {
            "request_id": {"type": "string", "pattern": "^req_[0-9a-f]{32}$"},
            "param": {"type": "string"},
        }},
    },
}

_HEADERS = {
    "X-Request-Id": {"description": "The request's id (`req_…`), also in error bodies and logs.", "required": True,
                     "schema": {"type": "string", "pattern": "^req_[0-9a-f]{32}$"}},
    "RateLimit-Limit": {"description": "Requests allowed in the current window of the tightest bucket.",
                        "schema": {"type": "integer", "minimum": 1}},
    "RateLimit-Remaining": {"description": "Requests left in the current window.",
                            "schema": {"type": "integer", "minimum": 0}},
    "RateLimit-Reset": {"description": "Seconds until the window resets.", "schema": {"type": "integer", "minimum": 0}},
    "Retry-After": {"description": "Seconds to wait before retrying.", "schema": {"type": "integer", "minimum": 0}},
    "Idempotent-Replayed": {"description": "`true` when this is the stored response of an earlier request "
                                           "with the same Idempotency-Key and body.",
                            "schema": {"type": "string", "enum": ["true"]}},
}

_PARAMETERS = {
    "IdempotencyKey": {
        "in": "header", "name": "Idempotency-Key", "required": False,
        "description": "1–255 printable ASCII characters, kept 24 hours per API key (on the buyer routes: per "
                       "link or invoice and client). The same key with the same method, path and body replays "
                       "the first response, byte for byte; with another request: 400 `idempotency_key_reused`; "
                       "while the first is still running: 409 `idempotency_key_in_use`. A webhook secret in the "
                       "first response is shown again while it is still the endpoint's (else 409). See "
                       "docs/retries.md.",
        "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\x20-\\x7e]+$"},
    },
    "X-Tender-Event-Id": {"in": "header", "name": "X-Tender-Event-Id", "required": True,
                          "description": "The event's id (`evt_…`): dedupe on it.", "schema": {"type": "string"}},
    "X-Tender-Event-Type": {"in": "header", "name": "X-Tender-Event-Type", "required": True,
                            "schema": {"type": "string"}},
    "X-Tender-Delivery-Id": {"in": "header", "name": "X-Tender-Delivery-Id", "required": True,
                             "description": "This delivery's id (`whd_…`).", "schema": {"type": "string"}},
    "X-Tender-Timestamp": {"in": "header", "name": "X-Tender-Timestamp", "required": True,
                           "description": "Unix seconds; part of the signed text.", "schema": {"type": "integer"}},
    "X-Tender-Signature": {"in": "header", "name": "X-Tender-Signature", "required": True,
                           "description": "`v1=<hex HMAC-SHA256(secret, \"{timestamp}.{raw body}\")>`, the secret's "
                                          "UTF-8 bytes as the key; two comma-separated values after a rotation.",
                           "schema": {"type": "string", "pattern": "^v1=[0-9a-f]{64}(,v1=[0-9a-f]{64})?$"}},
    "X-Tender-Integration-Id": {"in": "header", "name": "X-Tender-Integration-Id", "required": False,
                                "description": "On storefront integration deliveries only: the `int_…` id to check.",
                                "schema": {"type": "string"}},
    "User-Agent": {"in": "header", "name": "User-Agent", "required": True,
                   "schema": {"type": "string", "enum": ["Tender-Webhooks/1.0"]}},
    # Standard Webhooks (docs/webhooks.md#verifying-the-signature): a maintained library verifies them.
    "webhook-id": {"in": "header", "name": "webhook-id", "required": True,
                   "description": "Standard Webhooks: the event's id (`evt_…`), as `X-Tender-Event-Id`.",
                   "schema": {"type": "string"}},
    "webhook-timestamp": {"in": "header", "name": "webhook-timestamp", "required": True,
                          "description": "Standard Webhooks: unix seconds, as `X-Tender-Timestamp`.",
                          "schema": {"type": "integer"}},
    "webhook-signature": {"in": "header", "name": "webhook-signature", "required": True,
                          "description": "Standard Webhooks: `v1,<base64 HMAC-SHA256(key, \"{webhook-id}.{webhook-timestamp}."
                                         "{raw body}\")>`, the key being the base64-decoded part of the secret after "
                                         "`whsec_`; two space-separated values after a rotation.",
                          "schema": {"type": "string",
                                     "pattern": "^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)?$"}},
}


def register(spec) -> None:
    spec.components.security_scheme("bearerAuth", {
        "type": "http", "scheme": "bearer", "bearerFormat": "sk_live_ + 40 hex",
        "description": "A store's API key. Keys are shown once and stored only as digests."})
    spec.components.security_scheme("webhookSignature", {
        "type": "apiKey", "in": "header", "name": "X-Tender-Signature",
        "description": "Not a key: Tender signs each delivery with the endpoint's secret, "
                       "`v1=<hex HMAC-SHA256(secret, \"{X-Tender-Timestamp}.{raw body}\")>`; the receiver verifies it."})
    spec.components.schema("Error", _STANDARD_ERROR)
    spec.components.schema("LegacyError", _LEGACY_ERROR)
    for name, header in _HEADERS.items():
        spec.components.header(name, header)
    for name, parameter in _PARAMETERS.items():
        spec.components.parameter(name, parameter["in"], parameter)
