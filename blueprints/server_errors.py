"""gunicorn's own refusals, as JSON (docs/api.md#errors).

Some requests never reach the app: a request line over gunicorn's limit (414, a 5,000-character
query), a header gunicorn will not parse (400, a NUL byte in a value), too many or too large headers
(431), a transfer coding it does not implement (501). gunicorn answers those itself, with an HTML
page. This worker class lets gunicorn decide the status as always, then writes the standard JSON
error body instead, with the headers every response carries: what gunicorn would have sent is
captured, never put on the wire. The status line's phrase is the standard one for the status
(gunicorn's writer said `501 Bad Request`).
"""
from __future__ import annotations

from http import HTTPStatus
import json
import os

from gunicorn.workers.gthread import ThreadWorker

from blueprints.security_headers import SECURITY_HEADERS, security_headers_for
from config import load_settings
from core import ids
from core.errors import REFUSALS

_TYPES = {refusal.status: refusal.error_type for refusal in REFUSALS}
# A status gunicorn answers with -> the contract's code for it.
_CODES = {414: "request_too_large", 431: "request_too_large", 500: "internal_error"}


class _Capture:
    """The client socket, but what gunicorn's error writer sends is kept here instead."""

    def __init__(self, sock):
        self._sock = sock
        self.sent = b""

    def sendall(self, data: bytes) -> None:
        self.sent += data

    def __getattr__(self, name):
        return getattr(self._sock, name)


def json_error(status: int, code: str, message: str, headers: dict = SECURITY_HEADERS) -> bytes:
    """A whole answer, head and JSON body, that closes the connection."""
    request_id = ids.new_public_id("req_")
    body = json.dumps({"error": {"type": _TYPES.get(status, "invalid_request"), "code": code,
                                 "message": message, "request_id": request_id}}).encode()
    lines = [f"HTTP/1.1 {status} {_phrase(status)}", "Connection: close", "Content-Type: application/json",
             f"Content-Length: {len(body)}", f"X-Request-Id: {request_id}", "Cache-Control: no-store"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


class JsonErrorsWorker(ThreadWorker):
    """gunicorn's threaded worker (the one gunicorn.conf.py's `threads` selects), JSON errors."""

    def run(self):
        # Read here, in the worker process, once gunicorn has set its environment (`raw_env`).
        self.settings = load_settings(os.environ)
        self.security_headers = security_headers_for(self.settings)
        super().run()

    def json_error(self, status: int, code: str, message: str) -> bytes:
        return json_error(status, code, message, getattr(self, "security_headers", SECURITY_HEADERS))

    def handle_error(self, req, client, addr, exc):
        captured = _Capture(client)
        super().handle_error(req, captured, addr, exc)
        status = captured.sent.split(b"\r\n", 1)[0].split(b" ")[1:2]        # "HTTP/1.1 414 URI Too Long"
        if not status or not status[0].isdigit():
            return
        status = int(status[0])
        message = f"{_phrase(status)}: the request was refused before it reached Tender ({type(exc).__name__})."
        try:
            client.sendall(self.json_error(status, _CODES.get(status, "validation_error"), message))
        except OSError:
            pass            # the client has gone
