"""A body over 64 KiB gets its JSON 413 even while the client is still sending (docs/api.md#errors):
the server reads and discards up to 1 MiB before answering. On a real gunicorn, over a socket."""
import json
import socket
import time

import pytest

from tests import factories
from tests.support.processes import gunicorn_on
from tests.support.raw_http import post_head, read_answer


@pytest.fixture(scope="module")
def live_web(app, test_env, tmp_path_factory):
    with gunicorn_on(test_env, tmp_path_factory.mktemp("web") / "web.log", WEB_THREADS="2") as port:
        yield port


def _post_slowly(port: int, key: str, size: int) -> bytes:
    """POST `size` bytes, the body in 16 KiB pieces with pauses, and read the whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(post_head("/v1/invoices", key, Content_Length=size))
        sent = 0
        while sent < size:
            piece = min(16384, size - sent)
            sock.sendall(b" " * piece)
            sent += piece
            time.sleep(0.02)          # the server has time to answer before the body is all sent
        return read_answer(sock)


@pytest.mark.parametrize("size", [100_000, 600_000])
def test_a_large_body_sent_slowly_gets_the_json_413(live_web, store, size):
    key = factories.make_key(store)
    answer = _post_slowly(live_web, key, size)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413"), head[:200]
    assert json.loads(body)["error"]["code"] == "request_too_large"


def _answer_then_next(port: int, request: bytes) -> tuple[bytes, bytes]:
    """Send `request`, read its answer, then ask GET /health on the same connection: the second
    answer, or b"" when the server closed the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        first = read_answer(sock)
        try:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            second = read_answer(sock)
        except OSError:             # the server had closed it already
            second = b""
    return first.partition(b"\r\n\r\n")[0], second


def test_an_answer_before_the_body_was_read_says_connection_close(live_web, store):
    """The server closes after a body it did not read; the answer says so, so a client knows its
    next request must go on a new connection (rather than get no answer at all)."""
    key = factories.make_key(store)
    big = 2 * 1024 * 1024
    head, after = _answer_then_next(live_web, post_head("/v1/invoices", key, Content_Length=big) + b" " * big)
    assert head.startswith(b"HTTP/1.1 413") and b"Connection: close" in head, head
    assert after == b""
    body = 100 * 1024
    head, after = _answer_then_next(live_web, f"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {body}\r\n"
                                              "\r\n".encode() + b" " * body)
    # Refused before any route sees it (blueprints/request_reading.py), GET included.
    assert head.startswith(b"HTTP/1.1 413") and b"Connection: close" in head, head
    assert after == b""


def test_a_body_read_to_its_end_keeps_the_connection(live_web, store):
    key = factories.make_key(store)
    payload = json.dumps({"amount": "5.00"}).encode()
    head, after = _answer_then_next(live_web, post_head("/v1/invoices", key, Content_Length=len(payload)) + payload)
    assert head.startswith(b"HTTP/1.1 201") and b"Connection: keep-alive" in head, head
    assert after.startswith(b"HTTP/1.1 200")
