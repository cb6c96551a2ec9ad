"""Whether the swap provider accepts our credentials, as every process has seen it (docs/payment-engine.md).

A 401/403 from 1Click is an operator's problem (a wrong or revoked key), not a buyer's: any
process that meets one counts it in a metric, logs an error at most once a minute, and marks the
provider degraded in Redis for DEGRADED_SECONDS, which `/health` reports. The mark expires by
itself once answers stop failing (polls keep asking at their usual pace), so no process needs to
clear it on success.
"""
from __future__ import annotations

import logging
import threading
import time

from infra import metrics, queues

log = logging.getLogger("tender.provider")
AUTH_FAILED_KEY = "tender:provider:auth_failed"
DEGRADED_SECONDS = 120
LOG_EVERY_SECONDS = 60.0
_last_logged = {"at": None}
_lock = threading.Lock()


def auth_failed(status: int, message: str) -> None:
    metrics.count("provider_auth_failures", str(status) if status in (401, 403) else "other")
    with _lock:
        now = time.monotonic()
        due = _last_logged["at"] is None or now - _last_logged["at"] >= LOG_EVERY_SECONDS
        if due:
            _last_logged["at"] = now
    if due:
        log.error("the swap provider refuses our credentials (check ONECLICK_API_KEY / ONECLICK_JWT): %s", message)
    try:
        queues.redis().set(AUTH_FAILED_KEY, message[:500], ex=DEGRADED_SECONDS)
    except Exception as error:  # Redis down: the metric and the log still tell the operator
        log.warning("could not record the provider's auth failure in Redis: %s", error)


def status() -> str:
    """`degraded` while a 401/403 was seen in the last DEGRADED_SECONDS, else `ok`."""
    return "degraded" if queues.redis().exists(AUTH_FAILED_KEY) else "ok"
