"""Storefront integration routes, /v1/integration/<platform>/connect|disconnect|status, built once
for every platform in core/platforms.py. Every 400/403/404/409/422 is in the legacy shape."""
from flask import Blueprint, g

from blueprints.auth import requires_scope
from blueprints.context import settings
from blueprints.errors import legacy_errors, validation_status
from blueprints.requests import json_body, load_body
from core.clock import utcnow
from core.platforms import PLATFORMS, platform_scopes
from schemas.integrations import IntegrationConnectionSchema, IntegrationStatusSchema, connect_schema
from services import integrations

bp = Blueprint("integrations", __name__, url_prefix="/v1/integration")
LEGACY = (400, 403, 404, 409, 422)


def _add_routes(platform: str) -> None:
    connect_scope, status_scope, disconnect_scope = platform_scopes(platform)

    @legacy_errors(*LEGACY)
    @validation_status(422)
    @requires_scope(connect_scope, connect_retry=True)
    def connect():
        data = load_body(connect_schema(platform)())
        connection = integrations.connect(g.store, g.api_key, platform, data, now=utcnow(),
                                          allow_private=settings().allow_private_webhook_urls)
        return IntegrationConnectionSchema().dump(connection)

    @legacy_errors(*LEGACY)
    @requires_scope(disconnect_scope)
    def disconnect():
        json_body()                    # no body is needed, but a malformed one is still a 400
        integrations.disconnect(g.store, platform, now=utcnow())
        return {"disconnected": True}

    @legacy_errors(*LEGACY)
    @requires_scope(status_scope)
    def status():
        state = integrations.status(g.store, platform)
        return IntegrationStatusSchema().dump({**state, "supported_currencies": settings().supported_currencies})

    for action, view, method in (("connect", connect, "POST"), ("disconnect", disconnect, "POST"),
                                 ("status", status, "GET")):
        bp.add_url_rule(f"/{platform}/{action}", endpoint=f"{platform}_{action}", view_func=view, methods=[method])


for _platform in PLATFORMS:
    _add_routes(_platform)
