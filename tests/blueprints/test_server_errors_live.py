"""Refusals gunicorn makes itself, before a request reaches the app (a request line over its limit,
a header it will not parse), are JSON in the standard shape like every other error, on a real
gunicorn over a socket (blueprints/server_errors.py)."""
import json
import socket

import pytest

from tests.support.processes import gunicorn_on
from tests.support.raw_http import read_answer


@pytest.fixture(scope="module")
def live_web(app, test_env, tmp_path_factory):
    with gunicorn_on(test_env, tmp_path_factory.mktemp("web") / "web.log", WEB_THREADS="2") as port:
        yield port


def _ask(port: int, request: bytes) -> tuple[bytes, dict]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        head, _, body = read_answer(sock).partition(b"\r\n\r\n")
    return head, json.loads(body)


@pytest.mark.parametrize("request_line, status", [
    (f"GET /v1/invoices?q={'x' * 5000} HTTP/1.1", 414),
    (f"GET /{'a' * 10000} HTTP/1.1", 414),
])
def test_a_request_line_over_the_limit_is_a_json_414(live_web, request_line, status):
    head, body = _ask(live_web, f"{request_line}\r\nHost: 127.0.0.1\r\n\r\n".encode())
    assert head.startswith(f"HTTP/1.1 {status}".encode()), head
    assert b"Content-Type: application/json" in head and b"Connection: close" in head
    assert body["error"]["code"] == "request_too_large" and body["error"]["request_id"].startswith("req_")


def test_a_nul_byte_in_a_header_is_a_json_400(live_web):
    head, body = _ask(live_web, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Note: a\x00b\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and b"Content-Type: application/json" in head, head
    assert body["error"]["type"] == "invalid_request" and body["error"]["code"] == "validation_error"


def test_an_unknown_transfer_coding_is_501_not_implemented(live_web):
    head, body = _ask(live_web, b"POST /v1/invoices HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: xchunked\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 501 Not Implemented\r\n"), head      # gunicorn's writer said "501 Bad Request"
    assert body["error"]["request_id"].startswith("req_")


def test_gunicorns_refusals_carry_the_headers_of_every_response(live_web):
    head, _ = _ask(live_web, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Note: a\x00b\r\n\r\n")
    for header in (b"X-Content-Type-Options: nosniff", b"X-Frame-Options: DENY", b"Referrer-Policy: no-referrer",
                   b"Content-Security-Policy: default-src 'none'", b"Cache-Control: no-store"):
        assert header in head, (header, head)


@pytest.mark.parametrize("request_bytes", [
    f"GET /v1/refunds?invoice_id={'a' * 5000} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode(),
    f"GET /v1/refunds HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Note: {'a' * 20000}\r\n\r\n".encode(),
], ids=["414", "431"])
def test_the_servers_refusals_are_in_the_published_document(app, live_web, request_bytes):
    """A client generated from /v1/openapi.json meets these on any route: the document names them
    (a 414 on GET /v1/refunds was an undocumented status to the contract check)."""
    import requests

    from blueprints.docs import document
    from tests.support.contract import check_live

    with socket.create_connection(("127.0.0.1", live_web), timeout=10) as sock:
        sock.sendall(request_bytes)
        raw = read_answer(sock)
    head, _, body = raw.partition(b"\r\n\r\n")
    answer = requests.Response()
    answer.status_code = int(head.split()[1])
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.decode().partition(":")
        answer.headers[name] = value.strip()
    answer._content = body
    answer.request = requests.Request("GET", f"http://127.0.0.1:{live_web}/v1/refunds").prepare()
    with app.app_context():
        published = document()
    check_live(published, answer)
