"""A client that announces a body and does not send it, or trickles it, is answered 408
`request_timeout` once REQUEST_BODY_TIMEOUT_SECONDS have passed, and cannot hold the web process's
threads meanwhile: more such clients than threads, and another store is still served. On a real
gunicorn (one process, two threads), over sockets; blueprints/body_deadline.py."""
import json
import socket
import threading
import time

import pytest

from tests import factories
from tests.support.processes import gunicorn_on
from tests.support.raw_http import post_head, read_answer

ANSWER_WAIT_SECONDS = 30        # how long a client here waits for any answer before the test fails


@pytest.fixture(scope="module")
def live_web(app, test_env, tmp_path_factory):
    with gunicorn_on(test_env, tmp_path_factory.mktemp("web") / "web.log", WEB_THREADS="2",
                     REQUEST_BODY_TIMEOUT_SECONDS="1", RATE_LIMIT_WRITE_MODE="off") as port:
        yield port


def _head(key: str, **headers) -> bytes:
    return post_head("/v1/invoices", key, **headers)


def _answer(sock: socket.socket) -> tuple[int, dict]:
    """The status and JSON body of the one answer on `sock`."""
    sock.settimeout(ANSWER_WAIT_SECONDS)
    head, _, body = read_answer(sock).partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def _never_sent(sock, key):
    sock.sendall(_head(key, Content_Length=1000) + b"{}")


def _trickled(sock, key):
    sock.sendall(_head(key, Content_Length=1000) + b"{")

    def keep_trickling():
        try:
            for _ in range(20):
                time.sleep(0.3)
                sock.sendall(b" ")
        except OSError:
            pass            # cut off: what this test expects
    threading.Thread(target=keep_trickling, daemon=True).start()


def _chunked_and_stalled(sock, key):
    sock.sendall(_head(key, Transfer_Encoding="chunked") + b"2\r\n{}\r\n")


@pytest.mark.parametrize("stall", [_never_sent, _trickled, _chunked_and_stalled])
def test_a_body_that_does_not_arrive_is_408_and_holds_no_thread(live_web, store, other_store, stall):
    stalled_key, other_key = factories.make_key(store), factories.make_key(other_store)
    stalled = [socket.create_connection(("127.0.0.1", live_web)) for _ in range(3)]     # more than the threads
    try:
        for sock in stalled:
            stall(sock, stalled_key)
        with socket.create_connection(("127.0.0.1", live_web)) as other:
            body = b'{"amount": "5.00", "currency": "USD"}'
            other.sendall(_head(other_key, Content_Length=len(body)) + body)
            status, created = _answer(other)
        assert status == 201, created                       # served, not stuck behind the stalled ones
        for sock in stalled:
            status, refused = _answer(sock)
            assert (status, refused["error"]["code"]) == (408, "request_timeout"), refused
            assert refused["error"]["type"] == "invalid_request"
    finally:
        for sock in stalled:
            sock.close()


@pytest.mark.parametrize("chunks", [b"zz\r\n{}\r\n0\r\n\r\n", b"2\r\n{}XX0\r\n\r\n"],
                         ids=["bad chunk size", "chunk without its CRLF"])
def test_a_chunked_body_gunicorn_cannot_parse_is_a_json_400_and_closes(live_web, store, chunks):
    """The event loop hands malformed chunked framing to gunicorn's parser, which fails when the app
    reads the body: that is the client's bad input (it was a 500 with a traceback in the log)."""
    with socket.create_connection(("127.0.0.1", live_web)) as sock:
        head = post_head("/v1/payment-links", factories.make_key(store), Transfer_Encoding="chunked")
        sock.sendall(head + chunks)
        sock.settimeout(ANSWER_WAIT_SECONDS)
        head, _, body = read_answer(sock).partition(b"\r\n\r\n")
    assert head.split()[1] == b"400", head + body
    refused = json.loads(body)["error"]
    assert (refused["type"], refused["code"]) == ("invalid_request", "validation_error"), refused
    assert b"connection: close" in head.lower()        # the rest of the stream cannot be trusted
