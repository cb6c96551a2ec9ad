"""Clients that send their request's headers or body slowly hold no thread, are answered 408
`request_timeout` at REQUEST_HEADER_TIMEOUT_SECONDS (then REQUEST_BODY_TIMEOUT_SECONDS for the
body), and one client may have only ARRIVING_REQUESTS_PER_CLIENT requests arriving at once. On a real
gunicorn (gunicorn.conf.py, one process of four threads) over sockets: 50 slow clients are connected
and sending while /health and an invoice create from another address are answered;
blueprints/request_reading.py, arriving_requests.py."""
import re
import select
import socket

import pytest

from tests import factories
from tests.support.processes import gunicorn_on
from tests.support.raw_http import post_head
from tests.support.slow_clients import SLOW_HEAD, Trickler, answer, connect

HEADER_SECONDS = 6          # long enough for /health and a create on a loaded machine, short for CI
PER_CLIENT = 2
BODY_SECONDS = 4          # the same, for bodies
ANSWER_WAIT_SECONDS = 20    # how long a client here waits for any answer before the test fails


@pytest.fixture(scope="module")
def live_web(app, test_env, tmp_path_factory):
    with gunicorn_on(test_env, tmp_path_factory.mktemp("web") / "web.log", RATE_LIMIT_WRITE_MODE="off",
                     REQUEST_HEADER_TIMEOUT_SECONDS=str(HEADER_SECONDS), ARRIVING_REQUESTS_PER_CLIENT=str(PER_CLIENT),
                     REQUEST_BODY_TIMEOUT_SECONDS=str(BODY_SECONDS)) as port:
        yield port


def _connect(port: int, address: str) -> socket.socket:
    return connect(port, address, timeout=ANSWER_WAIT_SECONDS)


def _unanswered_and_open(sock: socket.socket) -> bool:
    """Nothing to read, not even the end of the stream: the server still waits on its headers."""
    readable, _, _ = select.select([sock], [], [], 0)
    return not readable


def _closed(sock: socket.socket) -> bool:
    """The end of the stream, or a reset (the server closed with our latest header line unread)."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def _served_quickly(port: int, store) -> None:
    """/health and an invoice create, from a client of its own, each answered."""
    with _connect(port, "127.0.0.1") as sock:
        sock.settimeout(HEADER_SECONDS / 2)       # on gunicorn's own worker this waits on the slow clients
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        head, health = answer(sock)
        assert head.startswith(b"HTTP/1.1 200"), head
        body = b'{"amount": "5.00", "currency": "USD"}'
        sock.sendall(post_head("/v1/invoices", factories.make_key(store), Content_Length=len(body)) + body)
        head, created = answer(sock)
        assert head.startswith(b"HTTP/1.1 201"), created


def test_fifty_slow_clients_hold_no_thread_and_get_408(live_web, store):
    crowd = [_connect(live_web, f"127.0.1.{n}") for n in range(1, 40)]         # one each: under the bound
    kept_alive = _connect(live_web, "127.0.2.1")       # a fast request first, then a slow one on the same connection
    kept_alive.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert answer(kept_alive)[0].startswith(b"HTTP/1.1 200")
    one_client = [_connect(live_web, "127.0.0.2") for _ in range(10)]           # over its bound of 2
    slow = crowd + [kept_alive] + one_client
    assert len(slow) == 50
    admitted, refused = crowd + [kept_alive] + one_client[:PER_CLIENT], one_client[PER_CLIENT:]
    try:
        for sock in admitted:
            sock.sendall(SLOW_HEAD)
        with Trickler(admitted, every=0.5, for_at_most=30):
            for sock in refused:                       # answered at once, not at the deadline
                head, body = answer(sock)
                assert head.startswith(b"HTTP/1.1 429 Too Many Requests"), head
                assert body["error"]["code"] == "rate_limited"
            _served_quickly(live_web, store)
            assert all(_unanswered_and_open(sock) for sock in admitted)    # still connected and sending
            for sock in admitted:
                head, body = answer(sock)
                assert head.startswith(b"HTTP/1.1 408 Request Timeout"), head
                assert b"Connection: close" in head and b"X-Frame-Options: DENY" in head, head
                assert (body["error"]["type"], body["error"]["code"]) == ("invalid_request", "request_timeout")
                assert _closed(sock)
    finally:
        for sock in slow:
            sock.close()


def test_slow_bodies_hold_no_thread_and_get_408(live_web, store):
    """Whole heads, then bodies that never finish (announced by length, chunked, after `Expect:
    100-continue`), from more clients than the process has threads: /health and a create are
    answered while they still wait, then each gets its 408 at the body deadline; bodies over the
    limit that trickle get their 413 then. A client at its bound of arriving requests is refused
    its next at once."""
    key = factories.make_key(store)
    starts = [post_head("/v1/invoices", key, Content_Length=100) + b"{",
              post_head("/v1/invoices", key, Transfer_Encoding="chunked") + b"2\r\n{}\r\n",
              post_head("/v1/invoices", key, Content_Length=100, Expect="100-continue")]
    addresses = [f"127.0.3.{n}" for n in range(1, 10)] + ["127.0.0.3"] * PER_CLIENT
    stalled = [_connect(live_web, address) for address in addresses]
    try:
        for n, sock in enumerate(stalled):
            sock.sendall(starts[n % len(starts)])
        for sock in stalled[2::len(starts)]:         # told to go on by the event loop, not by a thread
            assert _answer_head(sock).startswith(b"HTTP/1.1 100 Continue")
        with _connect(live_web, "127.0.0.3") as one_more:
            head, _ = answer(one_more)
        assert head.startswith(b"HTTP/1.1 429"), head
        too_large = [_connect(live_web, f"127.0.4.{n}") for n in range(1, 5)]
        stalled += too_large
        for sock in too_large:           # a chunk of 64 KiB + 1 announced, a little of it sent
            sock.sendall(post_head("/v1/invoices", key, Transfer_Encoding="chunked") + b"10001\r\n" + b" " * 1000)
        _served_quickly(live_web, store)
        assert all(_unanswered_and_open(sock) for sock in stalled)
        for sock in stalled:
            head, body = answer(sock)
            if sock in too_large:
                assert head.startswith(b"HTTP/1.1 413") and b"Connection: close" in head, head
                continue
            assert head.startswith(b"HTTP/1.1 408"), head
            assert body["error"]["code"] == "request_timeout" and "body" in body["error"]["message"]
    finally:
        for sock in stalled:
            sock.close()


def _answer_head(sock: socket.socket) -> bytes:
    """An interim answer's head, read byte by byte up to its end."""
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        head += sock.recv(1)
    return head


def test_pipelined_requests_are_each_answered_in_order(live_web, store):
    """Requests sent back to back in one write: what gunicorn read ahead with the first goes through
    the event loop again, and each is answered without waiting for more."""
    key = factories.make_key(store)
    body = b'{"amount": "5.00"}'
    with _connect(live_web, "127.0.0.4") as sock:
        sock.settimeout(HEADER_SECONDS / 2)
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                     + post_head("/v1/invoices", key, Content_Length=len(body)) + body
                     + b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        received = b""
        while len(re.findall(rb"HTTP/1\.1 (\d{3}) ", received)) < 3:
            piece = sock.recv(65536)            # the answers may come in one piece or several
            if not piece:
                break
            received += piece
    assert re.findall(rb"HTTP/1\.1 (\d{3}) ", received) == [b"200", b"201", b"200"]


def test_a_body_over_the_limit_after_expect_100_continue_is_refused_at_once(live_web, store):
    with _connect(live_web, "127.0.0.5") as sock:
        sock.sendall(post_head("/v1/invoices", factories.make_key(store), Content_Length=10**9, Expect="100-continue"))
        head, body = answer(sock)
    assert head.startswith(b"HTTP/1.1 413") and body["error"]["code"] == "request_too_large", head
