"""Waiting for other processes without sleeping blindly: a free local port, and a deadline poll.

Shared by the tests that start real processes (tests/e2e, tests/ops, tests/browser) and by
bench/ and scripts/fuzz.py, which start the same processes the same way."""
import socket
import time


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(check, *, timeout: float, what: str, interval: float = 0.1):
    """Call `check` until it returns something truthy (returned), or fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")
