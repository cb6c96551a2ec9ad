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
    path = _loggable_path(route)
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


def _loggable_path(route: str) -> str:
    """The path, unless it carries a secret (a dashboard invitation or reset link's token): then its
    route, or, for a path no route takes or a method it refuses (a link mangled by a mail client),
    the part before the token."""
    for prefix in _secret_path_prefixes():
        if request.path.startswith(prefix):
            return route if request.url_rule is not None else prefix + "<redacted>"
    return request.path


def _secret_path_prefixes() -> tuple[str, ...]:
    """What comes before the token in each route whose view is marked `secret_in_path`."""
    prefixes = current_app.extensions.get("tender.secret_path_prefixes")
    if prefixes is None:
        prefixes = tuple(rule.rule.split("<", 1)[0] for rule in current_app.url_map.iter_rules()
                         if getattr(current_app.view_functions.get(rule.endpoint), "secret_in_path", False))
        current_app.extensions["tender.secret_path_prefixes"] = prefixes
    return prefixes
