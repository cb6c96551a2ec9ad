"""Reading request bodies and query strings through schemas, with errors the API promises.

This is also the one boundary for text no store can hold (docs/api.md#errors): a NUL byte or a
lone UTF-16 surrogate anywhere in the JSON body, the query string, a path segment or a header is
400 `validation_error` naming the parameter, before any view, schema or database sees it.
"""
from __future__ import annotations

from decimal import Decimal
import json
import re
from typing import Callable

from flask import request
from marshmallow import Schema, ValidationError
from werkzeug.exceptions import RequestEntityTooLarge

from blueprints.request_framing import MAX_DRAIN_BYTES
from core.errors import BadRequest, RequestTimeout
from infra.pagination import Page, PageRequest
from schemas.common import ListQuerySchema, page_envelope


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
        raise BadRequest("invalid_json", "The request body is not valid JSON.") from None
    if not isinstance(data, dict):
        raise BadRequest("invalid_json", "The request body must be a JSON object.")
    _refuse_unstorable_json(data, "")
    return data


# NUL (PostgreSQL text cannot hold it) and unpaired surrogates (not encodable as UTF-8); a valid
# pair in JSON (`"\ud83d\ude00"`) is already one code point once parsed.
_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")


def _refuse_unstorable(param: str, text: str) -> None:
    if _UNSTORABLE.search(text):
        raise BadRequest("validation_error", f"{param}: must not contain NUL bytes or unpaired surrogates",
                          param=param)


def _refuse_unstorable_json(value, path: str) -> None:
    if isinstance(value, str):
        _refuse_unstorable(path or "body", value)
    elif isinstance(value, dict):
        for key, item in value.items():
            _refuse_unstorable(f"{path}.{_printable(key)}" if path else _printable(key), key)
            _refuse_unstorable_json(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _refuse_unstorable_json(item, f"{path}[{index}]")


def _printable(name: str) -> str:
    """A parameter name fit to echo back (the offending characters escaped)."""
    return _UNSTORABLE.sub(lambda match: f"\\u{ord(match.group()):04x}", name)


def refuse_unstorable_request_text() -> None:
    """before_request: query parameters, path segments and header values (the body is checked
    where it is parsed, in json_body)."""
    for name, value in request.args.items(multi=True):
        _refuse_unstorable(_printable(name), name)
        _refuse_unstorable(_printable(name), value)
    for name, value in (request.view_args or {}).items():
        if isinstance(value, str):
            _refuse_unstorable(name, value)
    for name, value in request.headers.items():
        _refuse_unstorable(_printable(name), value)


def drain_body() -> None:
    """Read and discard what is left of the body (up to 1 MiB) before answering a refusal, so a
    client still sending gets the JSON answer instead of a reset connection (docs/api.md#errors)."""
    stream = request.environ.get("wsgi.input")
    left = MAX_DRAIN_BYTES
    try:
        while stream is not None and left > 0:
            chunk = stream.read(min(65536, left))
            if not chunk:
                break
            left -= len(chunk)
    except (OSError, ValueError, RequestTimeout):      # the client hung up, or stopped sending
        pass


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


def listed(list_rows: Callable[..., Page], dump_rows: Callable[[list], list],
           filters: Schema | None = None) -> dict:
    """Every list route's answer: the page `list_rows` returns, its rows dumped by `dump_rows`, in
    the list envelope. The query string is read by `filters` where the route has filters, and
    `list_rows(query, page_request)` is called; otherwise only limit and cursors are read, and
    `list_rows(page_request)`."""
    query = load_query(filters or ListQuerySchema())
    page_request = PageRequest.from_query(query)
    page = list_rows(query, page_request) if filters else list_rows(page_request)
    return page_envelope(page, dump_rows(page.rows))


def load(schema: Schema, data: dict) -> dict:
    try:
        return schema.load(data)
    except ValidationError as error:
        param, message = _first_error(error.messages)
        raise BadRequest("validation_error", f"{param}: {message}", param=param) from None


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


def refuse_unstorable_fields(fields) -> None:
    """A form's fields (the dashboard's pages post forms): the same refusal as a JSON body's text."""
    for name, value in fields.items(multi=True):
        _refuse_unstorable(_printable(name), name)
        _refuse_unstorable(_printable(name), value)
