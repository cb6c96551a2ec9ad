"""Where a request ends, read from its head, so that the web process's event loop can read a whole
request before a thread takes it (blueprints/request_reading.py).

Only the plain framings are measured here: no body, one `Content-Length` of digits, or a
`Transfer-Encoding` whose last coding is `chunked`. Anything else (two lengths, both framings, a
coding gunicorn does not implement) goes to gunicorn at once, whose parser refuses it (400, 501)
without waiting on the client. A body over MAX_BODY_BYTES is refused 413 by the event loop itself
after it has read and dropped up to MAX_DRAIN_BYTES of it, so that a client still sending reads the
answer instead of a reset connection. Nothing here decides what a request means: gunicorn still
parses every byte of what it is given.
"""
from __future__ import annotations

from dataclasses import dataclass

MAX_BODY_BYTES = 64 * 1024          # the app's limit too (app.py): a larger body is 413
MAX_DRAIN_BYTES = 1024 * 1024       # of a body refused 413, read and dropped before answering
END_OF_HEAD = b"\r\n\r\n"
MALFORMED, TOO_LARGE = -1, -2       # chunked_body_end: gunicorn's to refuse; the event loop's 413


@dataclass(frozen=True)
class Framing:
    kind: str                       # "none", "length", "chunked", "too_large", or "other": gunicorn's to judge now
    length: int = 0                 # "length", "too_large": the body's bytes
    expects_continue: bool = False  # `Expect: 100-continue`: the client waits for a 100 before its body


def framing_of(head: bytes) -> Framing:
    """How the body after `head` (the request line and headers, END_OF_HEAD included) is framed."""
    lengths, codings, expects_continue = [], [], False
    head = head[2:] if head.startswith(b"\r\n") else head     # the one empty line gunicorn allows first
    for line in head.split(b"\r\n")[1:]:
        if not line:
            continue
        name, colon, value = line.partition(b":")
        if not colon or name != name.strip() or line[:1] in (b" ", b"\t"):
            return Framing("other")
        name, value = name.lower(), value.strip().lower()
        if name == b"content-length":
            lengths.append(value)
        elif name == b"transfer-encoding":
            codings.append(value)
        elif name == b"expect":
            expects_continue = value == b"100-continue"
    if lengths and codings or len(lengths) > 1:
        return Framing("other")
    if codings:
        last = b",".join(codings).split(b",")[-1].strip()
        return Framing("chunked" if last == b"chunked" else "other", expects_continue=expects_continue)
    if not lengths:
        return Framing("none")
    if not lengths[0].isdigit():
        return Framing("other")
    length = int(lengths[0])
    return Framing("length" if length <= MAX_BODY_BYTES else "too_large", length, expects_continue)


def chunked_body_end(data: bytes | bytearray, start: int) -> int | None:
    """Where a chunked body beginning at `data[start]` ends (after its last chunk and trailers): an
    index, None while more is to come, MALFORMED, or TOO_LARGE past MAX_BODY_BYTES."""
    position, total = start, 0
    while True:
        line_end = data.find(b"\r\n", position)
        if line_end < 0:
            return None if len(data) - position <= 1024 else MALFORMED
        try:
            size = int(bytes(data[position:line_end]).split(b";", 1)[0].strip(), 16)
        except ValueError:
            return MALFORMED
        total += size
        if total > MAX_BODY_BYTES:
            return TOO_LARGE
        if size == 0:
            return _trailers_end(data, line_end + 2)
        position = line_end + 2 + size + 2
        if position > len(data):
            return None
        if data[position - 2:position] != b"\r\n":
            return MALFORMED


def _trailers_end(data: bytes | bytearray, start: int) -> int | None:
    """After the last chunk: trailer lines, then an empty line."""
    if data[start:start + 2] == b"\r\n":
        return start + 2
    end = data.find(END_OF_HEAD, start - 2)
    if end < 0:
        return None if len(data) - start <= 8192 else MALFORMED
    return end + 4
