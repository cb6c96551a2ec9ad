"""One JSON log line per request: who, which route, what status, how long."""
import logging
import time

from flask import g, request

from services import api_keys

log = logging.getLogger("tender.request")


def start_timer():
    g.started_at = time.perf_counter()


def log_request(response):
    key = g.get("api_key")
    fields = {
        "request_id": g.get("request_id"),
        "method": request.method,
        "route": request.url_rule.rule if request.url_rule else None,
        "path": request.path,
        "status": response.status_code,
        "duration_ms": round((time.perf_counter() - g.get("started_at", time.perf_counter())) * 1000, 2),
        "remote_addr": request.remote_addr,
    }
    if key is not None:
        fields.update(store_id=str(key.store_id), api_key=f"{api_keys.KEY_PREFIX}…{key.last4}")
    log.info("%s %s %s", request.method, request.path, response.status_code, extra={"fields": fields})
    return response
