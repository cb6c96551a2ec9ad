"""Builds the OpenAPI 3.0.3 document from the app's URL map, the decorators on its views and the
marshmallow schemas (apispec). OpenAPI 3.0.3 rather than 3.1 because the bundled Swagger UI (4.x)
renders only 3.0; webhooks therefore go under `x-webhooks`, shaped like 3.1's `webhooks`."""
from __future__ import annotations

import dataclasses
import ipaddress
import re
from urllib.parse import urlsplit

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from apispec.ext.marshmallow.common import resolve_schema_cls
from marshmallow import fields

from apidoc import components
from apidoc.operations import CURSOR_PREFIXES, OPERATIONS, PATH_PARAMETERS, Items, Page
from models.events import API_VERSION, EVENT_TYPES
from schemas.fields import AmountString, HttpUrl, Metadata, PublicId, UtcDateTime, UuidString
from schemas.webhooks import EventObject, EventSchema

PUBLIC_PREFIX = "/v1/public/"
IGNORED_METHODS = {"HEAD", "OPTIONS"}
# Fiat: the currency's minor units (none for JPY, two for USD, three for KWD, at most four).
_FIAT_INPUT = r"^(?=.*[1-9])\d{1,12}(\.\d{1,4})?$"         # zero is refused: the lookahead wants a 1-9
_CRYPTO_INPUT = r"^(?=.*[1-9])\d{1,18}(\.\d{1,18})?$"
# Responses: fiat with exactly its currency's minor units, crypto with at least two; a signed amount (a difference)
# is negative when fees were taken.
_FIAT_OUTPUT = r"^{sign}\d+(\.\d{{1,4}})?$"
_CRYPTO_OUTPUT = r"^{sign}\d+\.\d{{2,}}$"


def is_documented(rule) -> bool:
    """The routes the contract covers: everything under /v1, and /health."""
    return rule.rule == "/health" or rule.rule.startswith("/v1/")


def openapi_path(rule: str) -> str:
    return re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule)


def build(app, *, server_url: str) -> dict:
    plugin = _marshmallow_plugin(_request_shapes())
    spec = APISpec(title="Tender merchant payment API", version=API_VERSION, openapi_version="3.0.3",
                   plugins=[plugin], info={"description": components.DESCRIPTION, "license": _license(server_url)},
                   servers=[{"url": _server(server_url)}])
    components.register(spec)
    paths: dict[str, dict] = {}
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        if not is_documented(rule):
            continue
        view = app.view_functions[rule.endpoint]
        for method in sorted(rule.methods - IGNORED_METHODS):
            op = OPERATIONS.get((method, rule.rule))
            if op is not None:      # an undocumented route fails tests/apidoc/test_openapi.py
                paths.setdefault(rule.rule, {})[method.lower()] = _operation(spec, plugin, rule, view, op)
    for rule_text, operations in paths.items():
        spec.path(path=openapi_path(rule_text), operations=operations)
    document = spec.to_dict()
    _require_response_fields(document, _sometimes_sent(plugin))
    document["x-webhooks"] = _webhooks(spec)
    return document


def _server(public_base_url: str) -> str:
    """The public address; a loopback default (a laptop's `make run`) is written as `/`, which
    names the server the document was fetched from, so the document stays right from any host."""
    host = urlsplit(public_base_url).hostname or ""
    if host == "localhost" or host.endswith(".localhost") or _is_loopback(host):
        return "/"
    return public_base_url


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _license(server_url: str) -> dict:
    """Tender carries no open-source licence: the API is used on the terms of whoever serves it,
    whose docs page is the place to state them."""
    return {"name": "Proprietary", "url": f"{server_url}/docs"}


def _request_shapes() -> set[type]:
    """The schema classes requests are read with (bodies and query strings)."""
    return {resolve_schema_cls(shape) for op in OPERATIONS.values() for shape in (op.body, op.query)
            if shape is not None}


def _sometimes_sent(plugin) -> dict[str, tuple]:
    """Component name -> the response fields its schema sends only sometimes (`SOMETIMES_SENT`)."""
    return {name: getattr(key[0], "SOMETIMES_SENT", ()) for key, name in plugin.converter.refs.items()}


def _require_response_fields(document, sometimes_sent: dict[str, tuple]) -> None:
    """Responses dump every declared field (null when empty), so each one is required there, but for
    the few a schema names in `SOMETIMES_SENT`; request shapes keep the `required` their schemas
    declare, and lose `default: null`, which only says "absent" and which generators read as
    "always sent"."""
    schemas = document["components"]["schemas"]
    request_shapes = _with_nested(schemas, {_schema_name(op.body) for op in OPERATIONS.values() if op.body is not None})
    for name, schema in schemas.items():
        if name in request_shapes:
            for field_schema in schema.get("properties", {}).values():
                if "default" in field_schema and field_schema["default"] is None:
                    del field_schema["default"]
        elif "properties" in schema and "required" not in schema:
            optional = sometimes_sent.get(name, ())
            schema["required"] = [field for field in schema["properties"] if field not in optional]



def _with_nested(schemas: dict, names: set[str]) -> set[str]:
    """`names` and every component their properties refer to, however deep (`$ref`, `allOf`, `items`):
    a shape nested in a request body is a request shape too (a PATCH's partial `kinds`)."""
    found, waiting = set(), list(names)
    while waiting:
        name = waiting.pop()
        if name in found or name not in schemas:
            continue
        found.add(name)
        waiting.extend(_refs_in(schemas[name]))
    return found


def _refs_in(node) -> list[str]:
    if isinstance(node, dict):
        ref = node.get("$ref", "")
        own = [ref.rsplit("/", 1)[-1]] if ref.startswith("#/components/schemas/") else []
        return own + [name for value in node.values() for name in _refs_in(value)]
    if isinstance(node, list):
        return [name for value in node for name in _refs_in(value)]
    return []

def _operation(spec, plugin, rule, view, op) -> dict:
    scopes = getattr(view, "required_scopes", None)
    if getattr(view, "idempotent", False):      # blueprints/idempotency.py's decorator
        op = dataclasses.replace(op, headers=op.headers + ("IdempotencyKey",))
    limited = scopes is not None or rule.rule.startswith(PUBLIC_PREFIX)
    operation = {
        "operationId": rule.endpoint.rsplit(".", 1)[-1],
        "summary": op.summary,
        "tags": [op.tag],
        "parameters": _parameters(plugin, rule, op),
        "responses": _responses(spec, rule, view, op, limited=limited, keyed=scopes is not None),
        "security": [{"bearerAuth": []}] if scopes else [],
    }
    description = [op.description] if op.description else []
    if scopes:
        operation["x-scopes"] = list(scopes)
        description.append("Scopes: " + " or ".join(f"`{scope}`" for scope in scopes) + ".")
    if rule.rule.startswith(PUBLIC_PREFIX):
        description.append("No API key. Rate limited per client IP" +
                           (" and per `plpub_` token." if method_is_write(rule, op) else "."))
    if description:
        operation["description"] = " ".join(description)
    if op.body is not None:
        cls = resolve_schema_cls(op.body)
        operation["requestBody"] = {
            "required": any(f.required for f in cls._declared_fields.values()),
            "content": {"application/json": {"schema": _ref(spec, op.body)}},
        }
    return operation


def method_is_write(rule, op) -> bool:
    return op.body is not None


def _parameters(plugin, rule, op) -> list:
    parameters = []
    for name in rule.arguments:
        description, schema = PATH_PARAMETERS[name]
        parameters.append({"in": "path", "name": name, "required": True, "description": description,
                           "schema": schema})
    if op.query is not None:
        for parameter in plugin.converter.schema2parameters(op.query, location="query"):
            # An absent query parameter is the "no filter" the schema's None default stands for.
            parameter["schema"].pop("nullable", None)
            if "enum" in parameter["schema"]:
                parameter["schema"]["enum"] = [value for value in parameter["schema"]["enum"] if value is not None]
            if parameter["schema"].get("default", 0) is None:
                del parameter["schema"]["default"]
            if parameter["name"] in ("starting_after", "ending_before") and isinstance(op.response, Page):
                prefix = CURSOR_PREFIXES[op.response.item]
                parameter["schema"]["pattern"] = f"^{prefix}[0-9a-z]{{20,32}}$"
                parameter["description"] = f"An id (`{prefix}…`) from the current page; give one of the two."
            parameters.append(parameter)
    parameters.extend(op.headers)          # component names: apispec writes the $ref
    return parameters


def _responses(spec, rule, view, op, *, limited: bool, keyed: bool) -> dict:
    common = {"X-Request-Id": {"$ref": "#/components/headers/X-Request-Id"}}
    if limited:
        common.update({name: {"$ref": f"#/components/headers/{name}"} for name in components.RATE_LIMIT_HEADERS})
    success = {"description": "Success.", "headers": dict(common),
               "content": {media_type: {"schema": _response_schema(spec, op.response)}
                           for media_type in op.media_types}}
    if "IdempotencyKey" in op.headers:
        success["headers"]["Idempotent-Replayed"] = {"$ref": "#/components/headers/Idempotent-Replayed"}
    if op.links:
        success["links"] = {name: {"operationId": target, "parameters": parameters}
                            for name, (target, parameters) in op.links.items()}
    responses = {str(op.status): success}

    errors, overrides = _error_texts(rule, view, op, limited=limited, keyed=keyed)

    legacy = getattr(view, "legacy_statuses", frozenset())
    for status in sorted(errors):
        shape = "LegacyError" if status in legacy else "Error"
        schema = _ref(spec, overrides[status]) if status in overrides else {"$ref": f"#/components/schemas/{shape}"}
        headers = dict(common)
        if status in (429, 503):
            headers["Retry-After"] = {"$ref": "#/components/headers/Retry-After"}
        text = " ".join(part for part in errors[status] if part)
        if status in legacy:
            text += " Legacy error shape on this route."
        responses[str(status)] = {"description": text.strip(), "headers": headers,
                                  "content": {"application/json": {"schema": schema}}}
    return responses


def _error_texts(rule, view, op, *, limited: bool, keyed: bool) -> tuple[dict[int, list[str]], dict]:
    """What each refusal of this operation means, by status, and the statuses whose body has a schema
    of its own."""
    errors: dict[int, list[str]] = {}
    if keyed:
        errors[401] = [components.ERROR_TEXT[401]]
        errors[403] = [components.ERROR_TEXT[403]]
    if limited:
        errors[429] = [components.ERROR_TEXT[429]]
    if rule.arguments:
        errors[404] = [components.ERROR_TEXT[404]]
    if op.query is not None or op.body is not None:
        errors[400] = [components.ERROR_TEXT[400]]
    else:   # every route refuses NUL bytes and lone surrogates in its query string, path and headers
        errors[400] = [components.ERROR_TEXT["characters"]]
    if op.body is not None:
        body_status = getattr(view, "validation_status", 400)    # webhook endpoints: 422
        if body_status != 400:
            malformed = "invalid_json" in getattr(view, "validation_codes", ())
            errors.setdefault(body_status, []).append(
                components.ERROR_TEXT["body"] + (" A body that is not a JSON object: `invalid_json`." if malformed else ""))
        errors[408] = [components.ERROR_TEXT[408]]
        errors[413] = [components.ERROR_TEXT[413]]
    # The server's own refusals, before any route is chosen (blueprints/server_errors.py): every route.
    errors.setdefault(408, []).insert(0, components.ERROR_TEXT["head_timeout"])
    errors[414] = [components.ERROR_TEXT[414]]
    errors[431] = [components.ERROR_TEXT[431]]
    if "IdempotencyKey" in op.headers:
        errors.setdefault(400, []).append(components.ERROR_TEXT["idempotency_reused"])
        errors.setdefault(409, []).append(components.ERROR_TEXT["idempotency_in_use"])
    if not op.no_database:
        errors[503] = [components.ERROR_TEXT[503]]
    errors[500] = [components.ERROR_TEXT[500]]
    overrides = {}
    for status, extra in op.errors.items():
        if isinstance(extra, tuple):
            extra, overrides[status] = extra
        errors.setdefault(status, []).append(extra)
    return errors, overrides


def _response_schema(spec, response):
    if isinstance(response, Page):
        return {"$ref": f"#/components/schemas/{_page_component(spec, response.item)}"}
    if isinstance(response, Items):
        return {"type": "object", "required": ["data"],
                "properties": {"data": {"type": "array", "items": _ref(spec, response.item)}}}
    if isinstance(response, dict):
        return response
    return _ref(spec, response)


def _page_component(spec, item) -> str:
    name = _schema_name(item) + "Page"
    if name not in spec.components.schemas:
        spec.components.schema(name, {
            "type": "object", "required": ["data", "has_more", "next_cursor"],
            "properties": {
                "data": {"type": "array", "items": _ref(spec, item)},
                "has_more": {"type": "boolean"},
                "next_cursor": {"type": "string", "nullable": True,
                                "description": "Pass as `starting_after` for the next page; null on the last."},
            },
        })
    return name


def _ref(spec, schema) -> dict:
    name = _schema_name(schema)
    if name not in spec.components.schemas:
        spec.components.schema(name, schema=resolve_schema_cls(schema))
    return {"$ref": f"#/components/schemas/{name}"}


def _schema_name(schema) -> str:
    cls = resolve_schema_cls(schema)
    return cls.__name__.removesuffix("Schema")


def _webhooks(spec) -> dict:
    """What a receiver gets: one POST per event type, the Event body, the X-Tender-* headers."""
    event = _ref(spec, EventSchema)
    return {event_type: {"post": {
        "operationId": webhook_operation_id(event_type),
        "summary": f"{event_type} delivered to your endpoint",
        "tags": ["Webhooks"],
        "security": [{"webhookSignature": []}],
        "parameters": [{"$ref": f"#/components/parameters/{name}"} for name in components.WEBHOOK_HEADERS],
        "requestBody": {"required": True, "content": {"application/json": {"schema": event}}},
        "responses": {"2XX": {"description": "Received; any other answer (or none in 10 s) is retried."},
                      "410": {"description": "Gone: the endpoint is disabled at once."}},
    }} for event_type in EVENT_TYPES}


def webhook_operation_id(event_type: str) -> str:
    """`invoice.paid` -> `on_invoice_paid`: what a generated receiver names its handler."""
    return "on_" + event_type.replace(".", "_")


def _marshmallow_plugin(request_shapes: set[type]) -> MarshmallowPlugin:
    plugin = MarshmallowPlugin(schema_name_resolver=_schema_name)

    def tender_fields(self, field, ret, **kwargs):
        """Our field types (schemas/fields.py) as the JSON they read and write."""
        if isinstance(field, AmountString):
            request_shape = type(field.root) in request_shapes
            if request_shape:
                pattern = _FIAT_INPUT if field.fiat else _CRYPTO_INPUT
            else:
                pattern = (_FIAT_OUTPUT if field.fiat else _CRYPTO_OUTPUT).format(sign="-?" if field.signed else "")
            return {"type": "string", "pattern": field.metadata.get("pattern", pattern)}
        if isinstance(field, UtcDateTime):
            return {"type": "string", "format": "date-time"}
        if isinstance(field, PublicId):
            return {"type": "string", "pattern": f"^{field.prefix}[0-9a-z]{{20,32}}$"}
        if isinstance(field, UuidString):
            return {"type": "string", "format": "uuid"}
        if isinstance(field, HttpUrl):
            return {"format": "uri", "maxLength": 2048}
        if isinstance(field, Metadata):
            return {"type": "object", "maxProperties": 50, "description": components.METADATA_TEXT,
                    "additionalProperties": {"oneOf": [{"type": "string", "maxLength": 500}, {"type": "number"},
                                                       {"type": "boolean"}]}}
        if isinstance(field, EventObject):
            return {"oneOf": [{"$ref": f"#/components/schemas/{_schema_name(schema)}"}
                              for schema in field.documented_as]}
        if isinstance(field, fields.Function) and "type" not in field.metadata:
            return {"type": "string"}      # ids, URLs and names; any other type is in the field's metadata
        return {}

    original_init = plugin.init_spec

    def init_spec(spec):
        original_init(spec)
        plugin.converter.add_attribute_function(tender_fields)

    plugin.init_spec = init_spec
    return plugin
