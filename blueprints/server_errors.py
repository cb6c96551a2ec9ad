"""gunicorn's own refusals, as JSON (docs/api.md#errors).

Some requests never reach the app: a request line over gunicorn's limit (414, a 5,000-character
query), a header gunicorn will not parse (400, a NUL byte in a value), too many or too large headers
(431). gunicorn answers those itself, with an HTML page. This worker class (gunicorn.conf.py) lets
gunicorn decide the status as always, then writes the standard JSON error body instead: what
gunicorn would have sent is captured, never put on the wire.
"""
from __future__ import annotations

import json

from gunicorn.workers.gthread import ThreadWorker

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


def json_error(status: int, reason: str, message: str) -> bytes:
    request_id = ids.new_public_id("req_")
    body = json.dumps({"error": {"type": _TYPES.get(status, "invalid_request"),
                                 "code": _CODES.get(status, "validation_error"),
                                 "message": message, "request_id": request_id}}).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nX-Request-Id: {request_id}\r\nCache-Control: no-store\r\n"
            "X-Content-Type-Options: nosniff\r\n\r\n")
    return head.encode("latin-1") + body


class JsonErrorsWorker(ThreadWorker):
    """gunicorn's threaded worker (the one gunicorn.conf.py's `threads` selects), JSON errors."""

    def handle_error(self, req, client, addr, exc):
        captured = _Capture(client)
        super().handle_error(req, captured, addr, exc)
        status_line = captured.sent.split(b"\r\n", 1)[0].decode("latin-1")     # "HTTP/1.1 414 URI Too Long"
        _, status, reason = (status_line.split(" ", 2) + ["", ""])[:3]
        if not status.isdigit():
            return
        message = f"{reason}: the request was refused before it reached Tender ({type(exc).__name__})."
        try:
            client.sendall(json_error(int(status), reason, message))
        except OSError:
            pass            # the client has gone
