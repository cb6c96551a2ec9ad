"""Hard deadlines for network work that a remote party could otherwise stretch for ever
(docs/webhooks.md#what-a-delivery-looks-like).

A socket timeout bounds each read, not an exchange: a receiver that trickles one byte a second
keeps `requests` waiting indefinitely. A `Deadline` covers a whole exchange instead: sockets
opened or reused under it are watched by one watchdog thread per process, which shuts them
down when the deadline passes, so whatever read or write is blocked on them returns at once.
Name resolution (`getaddrinfo` has no timeout at all) runs on a small pool of resolver threads
and is abandoned by its caller when its bound passes.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
import heapq
import itertools
import os
import socket
import threading
import time

RESOLVER_THREADS = 8
_current = threading.local()


class ResolutionTimeout(OSError):
    """A name did not resolve within its bound."""


class Deadline:
    def __init__(self, seconds: float):
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._finished = False
        self._lock = threading.Lock()

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def watch(self, sock: socket.socket) -> None:
        """Shut `sock` down when the deadline passes (at once if it already has)."""
        with self._lock:
            if self._finished:
                return
            if self.expired:
                _shut(sock)
            else:
                self._sockets.append(sock)

    def expire(self) -> None:
        with self._lock:
            if self._finished:
                return
            self.expired = True
            for sock in self._sockets:
                _shut(sock)

    def finish(self) -> None:
        with self._lock:
            self._finished = True
            self._sockets.clear()


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:       # already closed, or never connected
        pass


def current() -> Deadline | None:
    """The deadline of the exchange running on this thread, if any."""
    return getattr(_current, "deadline", None)


@contextmanager
def hard_deadline(seconds: float):
    """Run the block under a Deadline: its sockets are shut down `seconds` from now."""
    deadline = Deadline(seconds)
    _watchdog().add(deadline)
    previous, _current.deadline = current(), deadline
    try:
        yield deadline
    finally:
        _current.deadline = previous
        deadline.finish()


class _Watchdog:
    """One thread per process, sleeping until the nearest deadline."""

    def __init__(self):
        self._heap: list = []
        self._order = itertools.count()
        self._condition = threading.Condition()
        threading.Thread(target=self._run, name="deadline-watchdog", daemon=True).start()

    def add(self, deadline: Deadline) -> None:
        with self._condition:
            sooner = not self._heap or deadline.at < self._heap[0][0]
            heapq.heappush(self._heap, (deadline.at, next(self._order), deadline))
            if sooner:      # else the watchdog already wakes in time: waking it per attempt cost a thread switch
                self._condition.notify()

    def _run(self) -> None:
        while True:
            with self._condition:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    self._condition.wait(self._heap[0][0] - time.monotonic() if self._heap else None)
                _, _, deadline = heapq.heappop(self._heap)
            deadline.expire()


_per_process: dict = {}
_per_process_lock = threading.Lock()


def _per_pid(name: str, build):
    """A process-wide helper, rebuilt in a forked child (threads do not survive a fork)."""
    key = (name, os.getpid())
    with _per_process_lock:
        if key not in _per_process:
            _per_process[key] = build()
        return _per_process[key]


def _watchdog() -> _Watchdog:
    return _per_pid("watchdog", _Watchdog)


def resolve(host: str, port: int, *, timeout: float) -> list[str]:
    """The addresses `host` resolves to, or ResolutionTimeout after `timeout` seconds.

    A lookup that never answers keeps one resolver thread, never the caller; with every resolver
    thread stuck, further lookups wait their bound and fail."""
    pool = _per_pid("resolver", lambda: ThreadPoolExecutor(RESOLVER_THREADS, thread_name_prefix="resolver"))
    future = pool.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    try:
        infos = future.result(timeout=max(timeout, 0.001))
    except FutureTimeout:
        future.cancel()
        raise ResolutionTimeout(f"{host} did not resolve within {timeout:.1f} s") from None
    return list(dict.fromkeys(info[4][0] for info in infos))
