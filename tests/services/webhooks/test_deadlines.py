"""A receiver that trickles bytes is cut off at the attempt's hard deadline (docs/webhooks.md#what-a-delivery-looks-like)."""
import dataclasses
import socket
import threading
import time

import pytest

from core import deadlines
from tests.services.webhooks.conftest import pump
from tests.services.webhooks.test_delivery import create_invoice, delivery_rows, make_endpoint


@pytest.mark.parametrize("phase", ["headers", "body"])
def test_a_trickling_receiver_is_cut_off_at_the_deadline(client, auth, receiver, policy, phase):
    receiver.trickle("/slow", phase=phase, every=0.05)      # every read finds a byte: no read timeout fires
    make_endpoint(client, auth, receiver.url("/slow"))
    create_invoice(client, auth)
    began = time.monotonic()
    counts = pump(dataclasses.replace(policy, timeout_seconds=1, retry_schedule=(60,)))
    elapsed = time.monotonic() - began
    assert elapsed < 4, f"the run took {elapsed:.1f} s against a 1 s deadline"
    assert counts.failed_attempts == 1
    [row] = delivery_rows()
    assert row.status == "pending" and row.attempts == 1        # retried on the schedule
    assert row.last_error.startswith("timeout")


def test_a_tls_handshake_that_never_completes_is_cut_off(client, auth, policy):
    silent = socket.create_server(("127.0.0.1", 0))               # accepts, never says a word
    try:
        make_endpoint(client, auth, f"https://127.0.0.1:{silent.getsockname()[1]}/hook")
        create_invoice(client, auth)
        began = time.monotonic()
        pump(dataclasses.replace(policy, timeout_seconds=1, retry_schedule=()))
        assert time.monotonic() - began < 4
        [row] = delivery_rows()
        assert row.status == "failed" and row.last_error.startswith("timeout")
    finally:
        silent.close()


def test_a_deadline_shuts_down_a_blocked_read():
    left, right = socket.socketpair()
    try:
        with deadlines.hard_deadline(0.3) as deadline:
            deadline.watch(left)
            began = time.monotonic()
            assert left.recv(1) == b""          # woken by the shutdown, not by data
        assert deadline.expired and time.monotonic() - began < 2
    finally:
        left.close()
        right.close()


def test_a_sooner_deadline_fires_on_time_behind_later_ones():
    """The watchdog is woken only by a deadline sooner than those it waits for: one added behind
    a later one must still wake it."""
    left, right = socket.socketpair()
    try:
        with deadlines.hard_deadline(30):
            with deadlines.hard_deadline(0.3) as deadline:
                deadline.watch(left)
                began = time.monotonic()
                assert left.recv(1) == b""
            assert deadline.expired and time.monotonic() - began < 2
    finally:
        left.close()
        right.close()


def test_a_name_that_never_resolves_is_abandoned_at_its_bound(monkeypatch):
    release = threading.Event()
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: release.wait(30) and [])
    began = time.monotonic()
    try:
        with pytest.raises(deadlines.ResolutionTimeout):
            deadlines.resolve("never.example", 443, timeout=0.3)
        assert time.monotonic() - began < 2
    finally:
        release.set()
