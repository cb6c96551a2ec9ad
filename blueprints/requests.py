"""Reading request bodies and query strings through schemas, with errors the API promises."""
from __future__ import annotations

import json
from decimal import Decimal

from flask import request
from marshmallow import Schema, ValidationError
from werkzeug.exceptions import RequestEntityTooLarge

from services.errors import DomainError


def _refuse_constant(name):
    raise ValueError(f"{name} is not valid JSON")


def json_body() -> dict:
    """The body as a JSON object; an empty body is `{}`. Floats parse as Decimal, never float."""
    raw = request.get_data(cache=True)
    _refuse_streamed_overflow(raw)
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw, parse_float=Decimal, parse_constant=_refuse_constant)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise DomainError("invalid_json", "The request body is not valid JSON.") from None
    if not isinstance(data, dict):
        raise DomainError("invalid_json", "The request body must be a JSON object.")
    return data


def _refuse_streamed_overflow(raw: bytes) -> None:
    """A body without Content-Length (chunked) is cut at the size limit by Werkzeug, silently:
    a byte still waiting behind the cut means the body was too large (413), not the cut text."""
    limit = request.max_content_length
    if limit is not None and request.content_length is None and len(raw) >= limit:
        if request.environ["wsgi.input"].read(1):
            raise RequestEntityTooLarge()


def load_body(schema: Schema) -> dict:
    return load(schema, json_body())


def load_query(schema: Schema) -> dict:
    return load(schema, request.args.to_dict(flat=True))


def load(schema: Schema, data: dict) -> dict:
    try:
        return schema.load(data)
    except ValidationError as error:
        param, message = _first_error(error.messages)
        raise DomainError("validation_error", f"{param}: {message}", param=param) from None


def _first_error(messages) -> tuple[str, str]:
    """marshmallow's nested {field: [messages]} reduced to the first field and its message."""
    if isinstance(messages, list):
        return "body", str(messages[0])
    field = sorted(messages)[0]
    detail = messages[field]
    while isinstance(detail, dict):
        detail = detail[sorted(detail)[0]]
    text = str(detail[0] if isinstance(detail, list) else detail)
    if text == "Unknown field.":
        text = "unknown field"
    elif text == "Missing data for required field.":
        text = "is required"
    elif text.startswith("Not a valid"):
        text = text.rstrip(".").replace("Not a valid", "must be a valid")
    return field, text
