"""One JSON log line per request: who, which route, what status, how long."""
import logging
import time

from flask import current_app, g, request

from infra import metrics
from services.accounts import api_keys

log = logging.getLogger("tender.request")


def start_timer():
    g.started_at = time.perf_counter()


def log_request(response):
    key = g.get("api_key")
    seconds = time.perf_counter() - g.get("started_at", time.perf_counter())
    # The route pattern, never the raw path: unmatched paths would make unbounded label values.
    route = request.url_rule.rule if request.url_rule else "unmatched"
    metrics.observe_request(request.method, route, response.status_code, seconds)
    # A path that carries a secret (a dashboard invitation or reset link's token) is logged as its route.
    view = current_app.view_functions.get(request.endpoint) if request.endpoint else None
    path = route if getattr(view, "secret_in_path", False) else request.path
    fields = {
        "request_id": g.get("request_id"),
        "method": request.method,
        "route": route,
        "path": path,
        "status": response.status_code,
        "duration_ms": round(seconds * 1000, 2),
        "remote_addr": request.remote_addr,
    }
    if key is not None:
        fields.update(store_id=str(key.store_id), api_key=f"{api_keys.KEY_PREFIX}…{key.last4}")
    log.info("%s %s %s", request.method, path, response.status_code, extra={"fields": fields})
    return response
