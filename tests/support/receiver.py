"""A real webhook receiver on 127.0.0.1 for tests and the benchmark: a threaded http.server that
records every request and answers from a per-path script of statuses.

    with Receiver() as receiver:
        receiver.script("/fail-twice", [500, 500])     # then the default, 200
        receiver.trickle("/slow")                      # one byte every 50 ms, never finishing
        url = receiver.url("/fail-twice")
        receiver.wait_for(3)                           # deadline-bound, no sleeps
"""
from __future__ import annotations

from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import itertools
import socket
import ssl
import struct
import threading
import time


@dataclass
class Received:
    path: str
    headers: dict
    body: bytes
    at: float = field(default_factory=time.monotonic)      # when it arrived


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"       # keep-alive, as real receivers do
    disable_nagle_algorithm = True      # else headers and body in two writes wait on delayed ACKs (40 ms)

    def do_POST(self):
        receiver = self.server.receiver
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        receiver._arrived(Received(self.path, dict(self.headers.items()), body))
        if self.path in receiver.trickle_paths:
            self._trickle(*receiver.trickle_paths[self.path])
            return
        if self.path in receiver.broken_paths:
            self._break(receiver.broken_paths[self.path])
            return
        status, answer, headers = receiver._answer_for(self.path)
        if self.path in receiver.delays:
            receiver.stopping.wait(receiver.delays[self.path])
        if receiver.hold_event is not None and self.path in receiver.hold_paths:
            receiver.held.set()
            receiver.hold_event.wait(60)
        payload = answer.encode()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _trickle(self, phase: str, every: float):
        """Answer one byte every `every` seconds, never finishing: inside the status line and
        headers (phase "headers") or inside a body announced as 1 MB (phase "body")."""
        self.close_connection = True
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
        if phase == "body":
            self.wfile.write(head + b"Content-Length: 1000000\r\n\r\n")
            head = b""
        stream = itertools.chain(head, itertools.repeat(ord("a")))
        stop = self.server.receiver.stopping
        try:
            while not stop.wait(every):
                self.wfile.write(bytes([next(stream)]))
                self.wfile.flush()
        except OSError:       # the sender gave up and closed: what a deadline does
            pass

    def _break(self, how: str):
        """End the exchange the way a broken receiver does: close before the status line, or
        send the head and part of the body and reset the connection (RST)."""
        self.close_connection = True
        if how == "reset_after_headers":
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nok")
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except OSError:         # the sender gave up on a long answer (it reads 64 KiB at most)
            self.close_connection = True

    def log_message(self, *args):
        pass


class Receiver:
    def __init__(self, host: str = "127.0.0.1", *, tls: ssl.SSLContext | None = None):
        """`tls`: a server context (tests/support/tls_certificates.py) to answer over https."""
        self.server = ThreadingHTTPServer((host, 0), _Handler)
        self.tls = tls
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.broken_paths: dict[str, str] = {}
        self.delays: dict[str, float] = {}
        self.server.daemon_threads = True
        self.server.receiver = self
        self.requests: list[Received] = []
        self._scripts: dict[str, list] = {}
        self._condition = threading.Condition()
        self.hold_event: threading.Event | None = None
        self.hold_paths: set[str] = set()
        self.held = threading.Event()
        self.trickle_paths: dict[str, tuple[str, float]] = {}
        self.stopping = threading.Event()
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        if self.hold_event is not None:
            self.hold_event.set()
        self.server.shutdown()
        self.server.server_close()

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def url(self, path: str = "/hook", *, scheme: str | None = None, host: str = "127.0.0.1") -> str:
        scheme = scheme or ("https" if self.tls is not None else "http")
        return f"{scheme}://{host}:{self.port}{path}"

    def delay(self, path: str, seconds: float) -> None:
        """Answer requests to `path` only after `seconds` (or as soon as the receiver stops)."""
        self.delays[path] = seconds

    def break_off(self, path: str, how: str) -> None:
        """Requests to `path` end broken: "close_before_status" or "reset_after_headers"."""
        assert how in ("close_before_status", "reset_after_headers")
        self.broken_paths[path] = how

    def script(self, path: str, answers: list) -> None:
        """Answer the next requests to `path` with these statuses (or (status, body, headers))."""
        self._scripts[path] = list(answers)

    def hold(self, path: str) -> threading.Event:
        """Hold requests to `path` unanswered until the returned event is set."""
        self.hold_event = threading.Event()
        self.hold_paths.add(path)
        return self.hold_event

    def trickle(self, path: str, *, phase: str = "headers", every: float = 0.05) -> None:
        """Answer requests to `path` one byte at a time, for ever (until the receiver stops): each
        read finds a byte, so only a deadline on the whole attempt ends it."""
        self.trickle_paths[path] = (phase, every)

    def _answer_for(self, path):
        with self._condition:
            script = self._scripts.get(path)
            answer = script.pop(0) if script else 200
        if isinstance(answer, tuple):
            status, body, headers = (list(answer) + ["ok", {}])[:3]
            return status, body, headers
        return answer, "ok" if answer < 400 else "nope", {}

    def _arrived(self, received: Received) -> None:
        with self._condition:
            self.requests.append(received)
            self._condition.notify_all()

    def to(self, path: str) -> list[Received]:
        with self._condition:
            return [r for r in self.requests if r.path == path]

    def wait_for(self, count: int, *, path: str | None = None, timeout: float = 15.0) -> list[Received]:
        """Block until `count` requests (to `path`, if given) have arrived; fail at the deadline."""
        deadline = time.monotonic() + timeout
        with self._condition:
            while True:
                matching = [r for r in self.requests if path is None or r.path == path]
                if len(matching) >= count:
                    return matching
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"receiver: {len(matching)} of {count} requests within {timeout} s")
                self._condition.wait(remaining)


if __name__ == "__main__":
    # `python -m tests.support.receiver`: serve in its own process (the benchmark), print the
    # port, stop when stdin closes.
    import sys

    with Receiver() as live:
        print(live.port, flush=True)
        sys.stdin.read()
