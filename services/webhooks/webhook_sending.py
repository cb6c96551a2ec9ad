"""One webhook attempt over HTTP (docs/webhooks.md): the body, the signed headers, the POST under a
hard deadline (core/deadlines.py) and no redirects, and what came back. No database here: services/webhooks/webhook_delivery.py
claims the work, runs these attempts in a thread pool and records their outcomes.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
import http.client
import json
import logging
import os
import socket
import ssl
import time
from urllib.parse import urlsplit

import urllib3
import urllib3.exceptions

from core import clock, deadlines
from models.webhooks import MAX_EXCERPT_BYTES
from services.webhooks.webhook_signing import signature_header, standard_signature_header
from services.webhooks.webhook_urls import AddressRefused, delivery_pool

log = logging.getLogger("tender.webhooks")

USER_AGENT = "Tender-Webhooks/1.0"
MAX_BODY_READ = 64 * 1024            # read (and discard) at most this much of a response


@dataclass
class Work:
    """Everything one attempt needs, read at claim time so the sending thread never touches the DB."""
    delivery_id: object
    public_id: str
    number: int
    claim_token: str
    url: str
    secrets: list[str]
    body: bytes
    event_public_id: str
    event_type: str
    endpoint_id: object = None
    endpoint_enabled: bool = True
    endpoint_failing_since: dt.datetime | None = None
    integration_public_id: str | None = None       # int_…: the endpoint is a storefront installation's


@dataclass
class Outcome:
    work: Work
    started_at: dt.datetime
    ok: bool
    status_code: int | None = None
    latency_ms: int | None = None
    error: str | None = None
    excerpt: str | None = None


def render_body(payload: dict) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def headers_for(work: Work, timestamp: int) -> dict:
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Tender-Event-Id": work.event_public_id,
        "X-Tender-Event-Type": work.event_type,
        "X-Tender-Delivery-Id": work.public_id,
        "X-Tender-Timestamp": str(timestamp),
        "X-Tender-Signature": signature_header(work.secrets, timestamp, work.body),
        # Standard Webhooks (webhook_signing.py): the event id, so a receiver dedupes on it.
        "webhook-id": work.event_public_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": standard_signature_header(work.secrets, work.event_public_id, timestamp, work.body),
    }
    if work.integration_public_id:
        headers["X-Tender-Integration-Id"] = work.integration_public_id
    return headers


def send(pool: urllib3.PoolManager, work: Work, policy) -> Outcome:
    """One HTTP attempt under `policy` (its `timeout_seconds` and `allow_private`), always ending in
    an Outcome: whatever goes wrong while sending or describing the failure becomes this attempt's
    recorded failure, never an exception that costs the run its other results. Runs in a pool
    thread: no database access here."""
    started_at = clock.utcnow()
    try:
        return _send(pool, work, policy, started_at)
    except Exception as error:      # a bug of ours or of a library: still this attempt's failure
        log.exception("delivery %s: attempt %s failed unexpectedly", work.public_id, work.number)
        return Outcome(work, started_at, ok=False, error=f"failed while sending: {type(error).__name__}")


def _send(pool: urllib3.PoolManager, work: Work, policy, started_at: dt.datetime) -> Outcome:
    if not work.endpoint_enabled:
        return Outcome(work, started_at, ok=False, error="the endpoint is disabled; nothing was sent")
    if not policy.allow_private and urlsplit(work.url).scheme != "https":
        return Outcome(work, started_at, ok=False, error="refused: webhook URLs must be https://")
    timestamp = int(time.time())
    began = time.monotonic()
    response = None
    with deadlines.hard_deadline(policy.timeout_seconds) as deadline:
        try:
            response = pool.urlopen("POST", work.url, body=work.body, headers=headers_for(work, timestamp),
                                    timeout=urllib3.Timeout(connect=policy.timeout_seconds, read=policy.timeout_seconds),
                                    retries=False, redirect=False, preload_content=False)
            drained = False
            try:
                excerpt, complete, drained = _read_excerpt(response, deadline)
            finally:
                if not drained:
                    response.close()        # what is left unread: the connection is dropped, not reused
                response.release_conn()
        except (urllib3.exceptions.HTTPError, OSError) as error:     # a shut-down socket may surface raw
            if deadline.expired or _timed_out_error(error):
                return Outcome(work, started_at, ok=False, latency_ms=_ms(began), error=_timed_out(policy))
            return Outcome(work, started_at, ok=False, latency_ms=_ms(began), error=describe_failure(error),
                           status_code=response.status if response is not None else None)
    status = response.status
    outcome = Outcome(work, started_at, ok=200 <= status < 300 and complete, status_code=status,
                      latency_ms=_ms(began), excerpt=excerpt)
    if not complete:
        outcome.error = _timed_out(policy)
    elif 300 <= status < 400:
        outcome.error = f"redirects are not followed (HTTP {status} to {response.headers.get('Location', '?')[:200]})"
    elif not outcome.ok:
        outcome.error = f"HTTP {status}"
    return outcome


def _timed_out_error(error: BaseException) -> bool:
    # urllib3's NewConnectionError (a refused or unreachable address) is a ConnectTimeoutError by
    # inheritance only.
    return (isinstance(error, urllib3.exceptions.TimeoutError)
            and not isinstance(error, urllib3.exceptions.NewConnectionError))


def _read_excerpt(response, deadline: deadlines.Deadline) -> tuple[str, bool, bool]:
    """The first 1 KiB of the body as text; whether the answer came within the deadline; and
    whether the body was read to its end (else its connection cannot be reused)."""
    head, total = b"", 0
    for chunk in response.stream(4096):
        if len(head) < MAX_EXCERPT_BYTES:
            head += chunk[:MAX_EXCERPT_BYTES - len(head)]
        total += len(chunk)
        if deadline.expired:
            return _text(head), False, False
        if total > MAX_BODY_READ:
            return _text(head)[:MAX_EXCERPT_BYTES], not deadline.expired, False
    return _text(head)[:MAX_EXCERPT_BYTES], not deadline.expired, True


def _text(raw: bytes) -> str:
    """Bytes from a receiver as text a database column takes (PostgreSQL refuses NUL)."""
    return raw.decode("utf-8", "replace").replace("\x00", "\ufffd")


def _timed_out(policy) -> str:
    return f"timeout: no complete answer within {policy.timeout_seconds} s"


_TLS_REASONS = {
    "WRONG_VERSION_NUMBER": "tls: wrong version number (is this an http:// server?)",
    "RECORD_LAYER_FAILURE": "tls: record layer failure (is this an http:// server?)",
    "HTTP_REQUEST": "tls: the server expected TLS and got plain HTTP",
}


def describe_failure(error: BaseException) -> str:
    """A short, readable reason for a failed connection or exchange: a refused address, a TLS
    problem (`tls: certificate verify failed (certificate has expired)`), a reset, a close
    before the status line. Never raises: an odd exception is described by its type."""
    try:
        return _reason(_causes(error)) or f"connection failed: {type(error).__name__}: {str(error)[:300]}"
    except Exception:
        return f"connection failed: {type(error).__name__}"


def _causes(error: BaseException) -> list[BaseException]:
    """The error and every exception it wraps (causes, contexts, urllib3's `reason`, args),
    outermost first. Only exceptions are followed: `ssl.SSLError.reason` is a string."""
    seen, found, stack = set(), [], [error]
    while stack:
        current = stack.pop(0)
        if not isinstance(current, BaseException) or id(current) in seen:
            continue
        seen.add(id(current))
        found.append(current)
        stack.extend([current.__cause__, current.__context__, getattr(current, "reason", None)])
        stack.extend(getattr(current, "args", ()))
    return found


def _first(causes, kind):
    return next((cause for cause in causes if isinstance(cause, kind)), None)


def _reason(causes: list[BaseException]) -> str | None:
    if refused := _first(causes, AddressRefused):
        return refused.refusal
    if unverified := _first(causes, ssl.SSLCertVerificationError):
        return f"tls: certificate verify failed ({unverified.verify_message})"
    if tls := _first(causes, ssl.SSLError):
        code = tls.reason if isinstance(tls.reason, str) else None
        return _TLS_REASONS.get(code) or f"tls: {(code or str(tls)).replace('_', ' ').lower()[:200]}"
    if _first(causes, http.client.RemoteDisconnected):      # (a kind of ConnectionResetError)
        return "connection closed before the status line"
    if _first(causes, ConnectionResetError):
        return "connection reset"
    if _first(causes, ConnectionRefusedError):
        return "connection refused"
    if _first(causes, (urllib3.exceptions.IncompleteRead, http.client.IncompleteRead)):
        return "connection closed before the whole answer was read"
    if _first(causes, (socket.gaierror, deadlines.ResolutionTimeout)):
        return f"dns: could not resolve the host ({_first(causes, OSError)})"[:300]
    if unreachable := _first(causes, urllib3.exceptions.NewConnectionError):
        return f"connection failed: {str(unreachable).split(': ', 1)[-1][:300]}"
    return None


def _ms(began: float) -> int:
    return int((time.monotonic() - began) * 1000)


_connections: dict = {}


def shared_connections(policy) -> urllib3.PoolManager:
    """One connection pool per process (and per address policy), so connections to receivers are
    reused across delivery runs; never one inherited through a fork."""
    key = (os.getpid(), policy.allow_private, policy.concurrency, policy.ca_bundle)
    if key not in _connections:
        _connections.clear()
        _connections[key] = delivery_pool(allow_private=policy.allow_private, pool_size=policy.concurrency,
                                          ca_bundle=policy.ca_bundle)
    return _connections[key]
