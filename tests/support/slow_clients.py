"""Slow clients of a live gunicorn: connections from addresses of their own (all of 127/8 is this
machine) that send a request's head a line at a time and never finish it. Shared by
tests/blueprints/test_request_reading_live.py (they hold no thread and get their 408) and
bench/slow_clients.py (what they cost everyone else's latency)."""
from __future__ import annotations

from collections import Counter
import json
import select
import socket
import threading
import time

from tests.support.raw_http import read_answer

SLOW_HEAD = b"POST /v1/invoices HTTP/1.1\r\nHost: 127.0.0.1\r\n"


def connect(port: int, address: str, *, timeout: float) -> socket.socket:
    sock = socket.socket()
    sock.bind((address, 0))         # each address of 127/8 is another client to the server
    sock.settimeout(timeout)
    sock.connect(("127.0.0.1", port))
    return sock


def answer(sock: socket.socket) -> tuple[bytes, dict]:
    """The one answer on `sock`: its head, and its JSON body."""
    head, _, body = read_answer(sock).partition(b"\r\n\r\n")
    return head, json.loads(body)


class Trickler:
    """Sends one more header line to each of `sockets` every `every` seconds, from a thread of its
    own, for at most `for_at_most` seconds.

    With `reconnect_to` (the server's port), a connection the server answered (its 408 at the
    head's deadline, a 429 over the per-client bound) or closed is read, counted in `answers` by
    status, and replaced by a new one from the same address sending SLOW_HEAD, as an attacker
    keeping connections open would: at once after a 408, but not sooner than `every` seconds after
    that slot last connected, so that refused clients retry slowly instead of flooding."""

    def __init__(self, sockets: list[socket.socket], *, every: float = 0.5, for_at_most: float = 30,
                 reconnect_to: int | None = None):
        self.sockets, self.every, self.for_at_most = list(sockets), every, for_at_most
        self.reconnect_to = reconnect_to
        self.answers: Counter[str] = Counter()
        self.waiting: dict[socket.socket, float] = {}        # answered and closed: may reconnect from then
        self.opened = {sock: time.monotonic() for sock in self.sockets}
        # Each one's own address: a socket refused and reset already has no peer to ask.
        self.origin = {sock: sock.getsockname()[0] for sock in self.sockets}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def open_count(self) -> int:
        with self.lock:
            return len(self.sockets) - len(self.waiting)

    def _run(self):
        began = time.monotonic()
        next_line, line = began + self.every, 0
        while not self.stop.is_set() and time.monotonic() < began + self.for_at_most:
            if time.monotonic() >= next_line:
                line += 1
                next_line += self.every
                self._send(f"X-Slow-{line}: still coming\r\n".encode())
            if self.reconnect_to:
                self._replace(timeout=min(0.1, max(0.0, next_line - time.monotonic())))
            else:
                self.stop.wait(max(0.0, next_line - time.monotonic()))

    def _send(self, line: bytes) -> None:
        for sock in list(self.sockets):
            try:
                sock.sendall(line)
            except OSError:
                pass            # answered and closed: read (or replaced) elsewhere

    def _replace(self, timeout: float) -> None:
        live = [sock for sock in self.sockets if sock not in self.waiting]
        readable, _, _ = select.select(live, [], [], timeout) if live else ([], [], [])
        for sock in readable:
            self.answers[self._status(sock)] += 1
            with self.lock:
                self.waiting[sock] = self.opened[sock] + self.every
        for sock, when in list(self.waiting.items()):
            if time.monotonic() >= when:
                self._reconnect(sock)

    @staticmethod
    def _status(sock: socket.socket) -> str:
        try:
            head = read_answer(sock)
        except OSError:
            return "reset"
        return head.split(b" ", 2)[1].decode() if head.startswith(b"HTTP/") else "closed"

    def _reconnect(self, old: socket.socket) -> None:
        old.close()
        try:
            new = connect(self.reconnect_to, self.origin[old], timeout=old.gettimeout())
            new.sendall(SLOW_HEAD)
        except OSError:
            self.answers["could not connect"] += 1
            with self.lock:
                self.waiting[old] = time.monotonic() + self.every
            return
        with self.lock:
            self.sockets[self.sockets.index(old)] = new
            del self.waiting[old]
        self.opened[new], self.origin[new] = time.monotonic(), self.origin.pop(old)
        del self.opened[old]
        self.answers["reconnected"] += 1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=5)
