"""The body deadline's rule, over a real socket pair (blueprints/body_deadline.py): only a read that
waits on the client past the deadline is cut; an app that was busy past the deadline still reads a
body the client sent in time. The live gunicorn test is test_body_deadline_live.py."""
import socket
import time

import pytest

from blueprints.body_deadline import BodyDeadline
from core.errors import RequestTimeout

DEADLINE = 0.2


def _call(client_sends: bytes, busy_seconds: float = 0.0):
    """Run one request through the middleware on a socket pair; the app is busy for `busy_seconds`
    (a slow database, say) before it reads the 100-byte body. Returns what the app read, or raises."""
    server, client = socket.socketpair()
    server.settimeout(30)       # without the watchdog a read waits this long, then fails the test
    client.sendall(client_sends)
    read = {}

    def app(environ, start_response):
        time.sleep(busy_seconds)          # the app's own work before it asks for the body
        read["body"] = environ["wsgi.input"].read(100)
        return [b""]

    try:
        BodyDeadline(app, DEADLINE)({"gunicorn.socket": server, "CONTENT_LENGTH": "100",
                                     "wsgi.input": server.makefile("rb")}, None)
        return read["body"]
    finally:
        server.close()
        client.close()


def test_a_body_sent_in_time_is_read_however_long_the_app_was_busy_first():
    assert _call(b"x" * 100, busy_seconds=DEADLINE * 3) == b"x" * 100


@pytest.mark.parametrize("busy_seconds", [0.0, DEADLINE * 3])
def test_a_body_still_missing_when_read_is_the_408(busy_seconds):
    with pytest.raises(RequestTimeout) as refused:      # cut, not the 30 s socket timeout above
        _call(b"x" * 10, busy_seconds=busy_seconds)
    assert refused.value.code == "request_timeout" and refused.value.status == 408


def test_without_a_socket_it_stands_aside():
    environ = {"CONTENT_LENGTH": "3", "wsgi.input": object()}
    BodyDeadline(lambda environ, start_response: [environ["wsgi.input"]], DEADLINE)(environ, None)
    assert environ["wsgi.input"].__class__ is object
