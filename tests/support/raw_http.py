"""HTTP/1.1 written by hand over a socket, for the tests that need what no client library sends:
a body announced and never sent, trickled, or still being sent when the answer comes."""
from __future__ import annotations

import socket


def post_head(path: str, key: str, **headers) -> bytes:
    """The request line and headers of a JSON POST; `Content_Length=…` is `Content-Length: …`."""
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", f"Authorization: Bearer {key}",
             "Content-Type: application/json"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_answer(sock: socket.socket, *, request: bool = False) -> bytes:
    """The one answer on `sock`, head and body, read until its Content-Length is in. With `request`,
    a request: one without Content-Length has no body (an answer's body then runs to the close)."""
    answer = b""
    unknown = 0 if request else 1 << 30
    while b"\r\n\r\n" not in answer or len(answer.partition(b"\r\n\r\n")[2]) < _length(answer, unknown):
        chunk = sock.recv(65536)
        if not chunk:
            break
        answer += chunk
    return answer


def _length(answer: bytes, unknown: int) -> int:
    for line in answer.partition(b"\r\n\r\n")[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":")[1])
    return unknown
