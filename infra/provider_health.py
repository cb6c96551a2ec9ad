"""Whether the swap provider answers and accepts our credentials, as every process has seen it
(docs/payment-engine.md).

A 401/403 from 1Click is an operator's problem (a wrong or revoked key), not a buyer's: any
process that meets one counts it in a metric, logs an error at most once a minute, and marks the
provider degraded in Redis for DEGRADED_SECONDS, which `/health` reports. The mark expires by
itself once answers stop failing (polls keep asking at their usual pace), so no process needs to
clear it on success.

A provider that does not answer at all (refused, timed out, 5xx after the retries) is marked
unavailable the same way, for UNREACHABLE_SECONDS, with a warning at most once a minute; the
process that marked it clears the mark at its next answer, so `/health` turns back within one call.
"""
from __future__ import annotations

import logging
import threading
import time

from infra import metrics, queues

log = logging.getLogger("tender.provider")
AUTH_FAILED_KEY = "tender:provider:auth_failed"
UNREACHABLE_KEY = "tender:provider:unreachable"
DEGRADED_SECONDS = 120
UNREACHABLE_SECONDS = 60
LOG_EVERY_SECONDS = 60.0
_last_logged: dict[str, float] = {}
_marked_unreachable = {"here": False}       # did this process set the mark (so it clears it)?
_lock = threading.Lock()


def _log_due(kind: str) -> bool:
    """At most one log line a minute per kind and process."""
    with _lock:
        now = time.monotonic()
        due = kind not in _last_logged or now - _last_logged[kind] >= LOG_EVERY_SECONDS
        if due:
            _last_logged[kind] = now
    return due


def _mark(key: str, message: str, seconds: int) -> None:
    try:
        queues.redis().set(key, message[:500], ex=seconds)
    except Exception as error:  # Redis down: the log still tells the operator
        log.warning("could not record the provider's state in Redis: %s", error)


def auth_failed(status: int, message: str) -> None:
    metrics.count("provider_auth_failures", str(status) if status in (401, 403) else "other")
    if _log_due("auth"):
        log.error("the swap provider refuses our credentials (check ONECLICK_API_KEY / ONECLICK_JWT): %s", message)
    _mark(AUTH_FAILED_KEY, message, DEGRADED_SECONDS)


def unreachable(message: str) -> None:
    """The provider did not answer (after the client's retries): buyers get 503 until it does."""
    if _log_due("unreachable"):
        log.warning("the swap provider is unreachable (check ONECLICK_BASE_URL and the network): %s", message)
    _mark(UNREACHABLE_KEY, message, UNREACHABLE_SECONDS)
    _marked_unreachable["here"] = True


def answered() -> None:
    """The provider answered: clear this process's unreachable mark, if it set one (one Redis call
    then, none on the ordinary path)."""
    if _marked_unreachable["here"]:
        _marked_unreachable["here"] = False
        try:
            queues.redis().delete(UNREACHABLE_KEY)
        except Exception as error:  # the mark then expires by itself
            log.warning("could not clear the provider's state in Redis: %s", error)


def status() -> str:
    """`unavailable` while the provider was unreachable in the last UNREACHABLE_SECONDS, `degraded`
    while a 401/403 was seen in the last DEGRADED_SECONDS, else `ok`."""
    unreachable_mark, auth_mark = queues.redis().mget(UNREACHABLE_KEY, AUTH_FAILED_KEY)
    return "unavailable" if unreachable_mark else "degraded" if auth_mark else "ok"
