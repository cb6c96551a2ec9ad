"""rq-dashboard for the operators (Procfile `queues`, started by bin/queue-dashboard under gunicorn),
safe by default (docs/operations.md#queue-dashboard):

* the operator credentials, checked here with Tender's per-client limit on wrong ones
  (infra/operator_auth.py), not rq-dashboard's own plain comparison;
* no framing, no sniffing, no referrer (the headers Tender's API sends);
* no state change on a GET (rq-dashboard's `GET /requeue/<queue>` requeues every failed job: a link
  or an image on any page an operator opens would do it with the browser's saved credentials), and
  none from another site: a POST must come from the dashboard's own pages.

Configured by the environment bin/queue-dashboard sets: OPERATOR_USERNAME, OPERATOR_PASSWORD,
RQ_DASHBOARD_REDIS_URL (the Redis it shows, with RQ_DASHBOARD_REDIS_PASSWORD and
RQ_DASHBOARD_REDIS_SENTINEL_PASSWORD behind Sentinel), and the app's own Redis variables (REDIS_URL
or REDIS_SENTINELS…: where the limit counts).
"""
from __future__ import annotations

import os
from urllib.parse import urlsplit

from flask import jsonify, request
from rq_dashboard.cli import make_flask_app
from rq_dashboard.web import setup_rq_connection

from config import load_redis
from infra import operator_auth, queues

HEADERS = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'; base-uri 'none'; object-src 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
READS = ("GET", "HEAD", "OPTIONS")


def _refusal(status: int, code: str, message: str, headers: dict | None = None):
    response = jsonify({"error": {"code": code, "message": message}})
    response.status_code = status
    response.headers.update(headers or {})
    return response


def _from_another_site() -> bool:
    """A browser says where a request comes from: `Sec-Fetch-Site`, and `Origin` on every POST."""
    if request.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
        return True
    origin = request.headers.get("Origin")
    return origin is not None and urlsplit(origin).netloc != request.host


def build():
    """The gunicorn entry point (`queue_dashboard_app:build()`), configured by the environment."""
    redis = load_redis(os.environ)
    queues.connect(redis["redis_url"] or redis["redis_sentinel"])
    return create(os.environ["OPERATOR_USERNAME"], os.environ["OPERATOR_PASSWORD"],
                  os.environ["RQ_DASHBOARD_REDIS_URL"], redis_password=os.environ.get("RQ_DASHBOARD_REDIS_PASSWORD"),
                  sentinel_password=os.environ.get("RQ_DASHBOARD_REDIS_SENTINEL_PASSWORD"))


def create(username: str, password: str, dashboard_redis_url: str, *, redis_password: str | None = None,
           sentinel_password: str | None = None):
    """rq-dashboard over `dashboard_redis_url`, guarded; the limit counts in infra.queues' Redis."""
    app = make_flask_app(None, None, None, "")
    app.config.update(RQ_DASHBOARD_REDIS_URL=dashboard_redis_url, RQ_DASHBOARD_DISABLE_DELETE=True,
                      RQ_DASHBOARD_REDIS_PASSWORD=redis_password or None,
                      RQ_DASHBOARD_REDIS_SENTINEL_PASSWORD=sentinel_password or None)
    setup_rq_connection(app)

    @app.before_request
    def _guard():
        verdict = operator_auth.verify(request.authorization, client=request.remote_addr or "unknown",
                                       expected_username=username, expected_password=password)
        if verdict.retry_after:
            return _refusal(429, "rate_limited", "Too many wrong operator credentials from this client.",
                            {"Retry-After": str(verdict.retry_after)})
        if not verdict.allowed:
            return _refusal(401, "invalid_operator_credentials", "The dashboard needs the operator's credentials.",
                            {"WWW-Authenticate": 'Basic realm="Tender operator", charset="UTF-8"'})
        changes_state = request.method not in READS
        if not changes_state and request.url_rule is not None and "POST" in request.url_rule.methods:
            return _refusal(405, "method_not_allowed", "This action changes state: POST it from the dashboard.",
                            {"Allow": "POST"})
        if changes_state and _from_another_site():
            return _refusal(403, "cross_site_request", "State changes come from the dashboard's own pages only.")
        return None

    @app.after_request
    def _headers(response):
        for name, value in HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    return app
