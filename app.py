"""The Flask application factory."""
from __future__ import annotations

import os

from flask import Flask, g, jsonify
from werkzeug.middleware.proxy_fix import ProxyFix

from blueprints import dashboard, register_blueprints
from blueprints.body_deadline import BodyDeadline
from blueprints.errors import register_error_handlers
from blueprints.rate_limits import limit_public_request, stamp_headers
from blueprints.request_log import log_request, start_timer
from blueprints.request_framing import MAX_BODY_BYTES
from blueprints.requests import refuse_unstorable_request_text
from blueprints.security_headers import security_headers_for
from bootstrap import init_runtime
from cli import register_commands
from config import Settings, load_settings
from core import ids
from models.base import db



class _JsonFlask(Flask):
    def make_default_options_response(self):
        """OPTIONS on a route: its methods as JSON (Flask's own answer is an empty text/html page)."""
        methods = sorted(super().make_default_options_response().allow)
        response = jsonify({"methods": methods})
        response.allow.update(methods)
        return response


def create_app(settings: Settings | None = None) -> Flask:
    settings = settings or load_settings(os.environ)
    init_runtime(settings)
    app = _JsonFlask("tender")
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    app.json.sort_keys = False          # keep fields in the documented order
    # A doubled slash (`/v1/payment-links//invoices`, an empty id) is a JSON 404, not werkzeug's
    # redirect to the merged path, whose body is an HTML page (a redirect skips the error handlers).
    app.url_map.merge_slashes = False
    app.extensions["tender.settings"] = settings
    register_error_handlers(app)
    register_blueprints(app)
    dashboard.init_app(app)         # the merchant dashboard's sessions and CSRF tokens
    register_commands(app)
    _register_request_hooks(app)
    app.wsgi_app = _TrustedProxies(app, app.wsgi_app)
    app.wsgi_app = BodyDeadline(app.wsgi_app, settings.request_body_timeout_seconds,
                                 settings.arriving_requests_per_client)
    if _runs_embedded_jobs(settings):
        from scheduler import embedded

        app.extensions["tender.embedded_jobs"] = embedded.start(settings)
    return app


def _runs_embedded_jobs(settings: Settings) -> bool:
    """With the embedded Redis nothing else can run jobs, so the web process does (docs/operations.md);
    not inside a `flask …` command (a migration must not race a sweep), and not when turned off."""
    import click

    return settings.embedded_redis and settings.embedded_jobs and click.get_current_context(silent=True) is None


class _TrustedProxies:
    """werkzeug's ProxyFix for `TRUSTED_PROXY_HOPS` X-Forwarded-For/-Proto hops (0: none), read from the
    app's settings on each request: behind a router every buyer would otherwise be the router's
    address, and share one rate limit."""

    def __init__(self, app: Flask, wsgi_app):
        self.app, self.wsgi_app, self._fixes = app, wsgi_app, {}

    def __call__(self, environ, start_response):
        hops = self.app.extensions["tender.settings"].trusted_proxy_hops
        if not hops:
            return self.wsgi_app(environ, start_response)
        if hops not in self._fixes:
            self._fixes[hops] = ProxyFix(self.wsgi_app, x_for=hops, x_proto=hops)
        return self._fixes[hops](environ, start_response)


def _register_request_hooks(app: Flask) -> None:
    @app.before_request
    def _assign_request_id():
        g.request_id = ids.new_public_id("req_")

    app.before_request(start_timer)
    app.before_request(refuse_unstorable_request_text)
    app.before_request(limit_public_request)
    # after_request hooks run in reverse order of registration: the request log, registered
    # first, runs last and sees the final response.
    app.after_request(log_request)
    app.after_request(stamp_headers)

    security_headers = security_headers_for(app.extensions["tender.settings"])

    @app.after_request
    def _stamp_response(response):
        response.headers["X-Request-Id"] = g.get("request_id") or ids.new_public_id("req_")
        response.headers.setdefault("Cache-Control", "no-store")
        for name, value in security_headers.items():
            response.headers.setdefault(name, value)     # /docs sets its own Content-Security-Policy
        return response

    @app.teardown_appcontext
    def _return_connection(_error):
        # Connections are borrowed lazily by the first query and handed back to the pool here.
        if not db.is_closed():
            db.close()
