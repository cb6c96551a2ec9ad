"""Where a request ends, read from its head, so that the web process's event loop can read a whole
request before a thread takes it (blueprints/request_reading.py).

Only the plain framings are measured here: no body, one `Content-Length` of digits, or a
`Transfer-Encoding` whose last coding is `chunked`, each up to MAX_BODY_BYTES. Anything else (two
lengths, both framings, a coding gunicorn does not implement) goes to gunicorn at once, whose
parser refuses it (400, 501) without waiting on the client; a body over MAX_BODY_BYTES goes to the
app as before, which answers 413 (and is watched by blueprints/body_deadline.py while it discards).
Nothing here decides what a request means: gunicorn still parses every byte.
"""
from __future__ import annotations

from dataclasses import dataclass

MAX_BODY_BYTES = 64 * 1024          # the app's limit too (app.py): a larger body is 413
END_OF_HEAD = b"\r\n\r\n"


@dataclass(frozen=True)
class Framing:
    kind: str                       # "none", "length", "chunked", or "other": gunicorn's to judge now
    length: int = 0                 # "length": the body's bytes
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
    if not lengths[0].isdigit() or int(lengths[0]) > MAX_BODY_BYTES:
        return Framing("other")
    return Framing("length", int(lengths[0]), expects_continue)


def chunked_body_end(data: bytes | bytearray, start: int) -> int | None:
    """Where a chunked body beginning at `data[start]` ends (after its last chunk and trailers): an
    index, None while more is to come, or -1 when it is malformed or over MAX_BODY_BYTES (gunicorn
    and the app judge it then)."""
    position, total = start, 0
    while True:
        line_end = data.find(b"\r\n", position)
        if line_end < 0:
            return None if len(data) - position <= 1024 else -1
        try:
            size = int(bytes(data[position:line_end]).split(b";", 1)[0].strip(), 16)
        except ValueError:
            return -1
        total += size
        if total > MAX_BODY_BYTES:
            return -1
        if size == 0:
            return _trailers_end(data, line_end + 2)
        position = line_end + 2 + size + 2
        if position > len(data):
            return None
        if data[position - 2:position] != b"\r\n":
            return -1


def _trailers_end(data: bytes | bytearray, start: int) -> int | None:
    """After the last chunk: trailer lines, then an empty line."""
    if data[start:start + 2] == b"\r\n":
        return start + 2
    end = data.find(END_OF_HEAD, start - 2)
    if end < 0:
        return None if len(data) - start <= 8192 else -1
    return end + 4
