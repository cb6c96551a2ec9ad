"""The contract, machine-readable (GET /v1/openapi.json) and for people (GET /docs: Swagger UI from
the swagger-ui-bundle package, served by this app: nothing is fetched from elsewhere)."""
from flask import Blueprint, Response, abort, current_app, jsonify, send_from_directory

from apidoc.document import build
from blueprints.context import settings

bp = Blueprint("docs", __name__)
DOCUMENT_EXTENSION = "tender.openapi"
ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png", "favicon-16x16.png")
# Swagger UI sets inline styles; scripts come only from this app (the initializer is a file, not inline).
DOCS_CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
            "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Tender API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script></body></html>
"""
_INIT = """window.ui = SwaggerUIBundle({url: "/v1/openapi.json", dom_id: "#swagger-ui", deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis], layout: "BaseLayout", validatorUrl: null});
"""


def document() -> dict:
    """Built once per process: the URL map and the schemas do not change while it runs."""
    cached = current_app.extensions.get(DOCUMENT_EXTENSION)
    if cached is None:
        cached = build(current_app, server_url=settings().public_base_url)
        current_app.extensions[DOCUMENT_EXTENSION] = cached
    return cached


@bp.get("/v1/openapi.json")
def get_openapi():
    return jsonify(document())


@bp.get("/docs")
def get_docs():
    return _with_csp(Response(_PAGE, mimetype="text/html"))


@bp.get("/docs/init.js")
def get_docs_init():
    return _with_csp(Response(_INIT, mimetype="text/javascript"))


@bp.get("/docs/assets/<name>")
def get_docs_asset(name):
    if name not in ASSETS:
        abort(404)
    import swagger_ui_bundle

    response = send_from_directory(swagger_ui_bundle.swagger_ui_path, name, max_age=3600)
    return _with_csp(response)


def _with_csp(response):
    response.headers["Content-Security-Policy"] = DOCS_CSP
    return response
