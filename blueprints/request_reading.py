"""A request's head (request line and headers) must arrive within REQUEST_HEADER_TIMEOUT_SECONDS and
its body within REQUEST_BODY_TIMEOUT_SECONDS more, and both are read without holding a thread.

gunicorn's threaded worker gives a connection to one of its few threads as soon as a byte arrives,
and the thread then reads the request line and headers, blocking, for as long as the client keeps
sending: one header line every few seconds holds a thread indefinitely, and eight such clients held
every thread of the default `web` (2 processes x 4 threads), /health included. A body sent slowly
held a thread the same way, until the body deadline (blueprints/body_deadline.py) cut it.

So this worker reads requests in its event loop, where gunicorn already waits on kept-alive
connections: a readable socket is read without blocking into the connection's buffer, and only once
the buffer holds the whole request, the head (up to the empty line that ends it) and its body
(blueprints/request_framing.py), does the connection go to a thread, the bytes put back in
front of gunicorn's own parser, which parses them as always. Nothing here decides what a request
means: it only finds where it ends, so gunicorn and Tender never disagree about what was asked.
* A head not all in at its deadline, or a body not all in at its own, is answered 408
  `request_timeout` and the connection closed. A connection that has sent nothing is closed without
  an answer at the head's deadline (after `keepalive` seconds once it has served a request), as
  gunicorn closes idle connections.
* A client already at its bound of arriving requests (blueprints/arriving_requests.py) is answered
  429 `rate_limited` at once and the connection closed.
* A client that sent `Expect: 100-continue` is told to go on from here (gunicorn says so again
  later: a client reads any number of 100 answers, RFC 9110).
* A body over 64 KiB is answered 413 `request_too_large` from here, once up to 1 MiB of it has been
  read and dropped (so a client still sending reads the answer, not a reset), or at its deadline;
  after `Expect: 100-continue`, at once.
* What is not read here goes to gunicorn as it is: a head longer than gunicorn accepts (431, 414),
  framing it refuses (400, 501).
TLS and HTTP/2 with prior knowledge keep gunicorn's own path (their first bytes are no HTTP/1 head):
Tender terminates TLS in front of gunicorn (docs/operations.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
import selectors
import time

from gunicorn.http2 import negotiation

from blueprints.arriving_requests import ARRIVING
from blueprints.request_framing import (END_OF_HEAD, MAX_DRAIN_BYTES, TOO_LARGE, Framing, chunked_body_end,
                                        framing_of)
from blueprints.server_errors import JsonErrorsWorker

# What reading a request has come to.
WAITING, WHOLE, REFUSED_TOO_LARGE = "waiting", "whole", "too large"


@dataclass
class _Arriving:
    """A request being read by the event loop."""
    client: str                 # whose arriving request this is (blueprints/arriving_requests.py)
    deadline: float             # the head, then the body, must be in by then
    idle_until: float           # a connection that sent nothing by then is closed without an answer
    buffer: bytearray = field(default_factory=bytearray)
    searched: int = 0           # the buffer up to here holds no END_OF_HEAD
    head_end: int | None = None
    framing: Framing | None = None
    dropping: int | None = None  # a body refused 413: how many more of its bytes to read and drop
    watched: bool = False       # registered with the event loop

    def take(self, data: bytes) -> None:
        if self.dropping is None:
            self.buffer += data
        else:
            self.dropping -= len(data)

    def drop_body(self, up_to: int) -> None:
        """Keep none of the body from here on; read and drop it until `up_to` of it has come."""
        self.dropping = up_to - (len(self.buffer) - self.head_end)
        del self.buffer[self.head_end:]

    def find_head_end(self) -> bool:
        """Has the head's end just been found?"""
        found = self.buffer.find(END_OF_HEAD, max(self.searched - len(END_OF_HEAD) + 1, 0))
        self.searched = len(self.buffer)
        if found < 0:
            return False
        self.head_end = found + len(END_OF_HEAD)
        self.framing = framing_of(bytes(self.buffer[:self.head_end]))
        return True

    def body_state(self) -> str:
        if self.dropping is not None:
            return REFUSED_TOO_LARGE if self.dropping <= 0 else WAITING
        if self.framing.kind == "length":
            return WHOLE if len(self.buffer) >= self.head_end + self.framing.length else WAITING
        if self.framing.kind == "chunked":
            end = chunked_body_end(self.buffer, self.head_end)
            if end == TOO_LARGE:
                self.drop_body(MAX_DRAIN_BYTES)
                return self.body_state()
            return WAITING if end is None else WHOLE
        return WHOLE


def longest_head(cfg) -> int:
    """The most bytes of request line and headers gunicorn's parser reads before refusing (431/414)."""
    line = cfg.limit_request_line if cfg.limit_request_line > 0 else 1024 * 1024
    return line + cfg.limit_request_fields * (cfg.limit_request_field_size + 2) + 4


class ReadWholeRequestsWorker(JsonErrorsWorker):
    """gunicorn's threaded worker (gunicorn.conf.py) that hands a connection to a thread only with
    its request all read, and JSON for its own refusals (blueprints/server_errors.py)."""

    def init_process(self):
        self.arriving: dict = {}            # connection -> _Arriving, for the connections being read
        self.longest_head = longest_head(self.cfg)
        super().init_process()              # runs the event loop

    def enqueue_req(self, conn):
        """Every way a connection reaches a thread comes here: new, kept alive and readable again,
        or holding bytes of its next request already. Read its request first."""
        if self.cfg.is_ssl or conn.is_http2 or negotiation.prior_knowledge_allowed(self.cfg, conn.client):
            return super().enqueue_req(conn)
        now, kept_alive = time.monotonic(), conn.parser is not None
        client = ARRIVING.enter(_address(conn.client), self.settings.arriving_requests_per_client)
        if client is None:
            self._refuse(conn, 429, "rate_limited",
                         "Too many requests from this client are still arriving; retry when they have.")
            return None
        head_seconds = self.settings.request_header_timeout_seconds
        request = _Arriving(client, deadline=now + head_seconds,
                            idle_until=now + (self.cfg.keepalive if kept_alive else head_seconds))
        self.arriving[conn] = request
        if kept_alive:
            request.buffer += conn.parser.unreader.take_buffered()     # read ahead with the previous request
        conn.sock.setblocking(False)
        self._read(conn)
        return None

    def _read(self, conn) -> None:
        request = self.arriving[conn]
        state = self._progress(conn, request)
        if state == WAITING:
            try:
                data = conn.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                data = None
            except OSError:
                data = b""
            if data == b"":                                    # the client has gone
                self._forget(conn)
                self._close(conn)
                return
            if data is not None:
                request.take(data)
            state = self._progress(conn, request)
            if state == WAITING:
                if not request.watched:
                    self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_readable, conn))
                    request.watched = True
                return
        self._forget(conn)
        if state == REFUSED_TOO_LARGE:
            self._refuse(conn, 413, "request_too_large", "Request bodies are limited to 64 KiB.")
            return
        future = self.tpool.submit(self._handle_read_request, conn, bytes(request.buffer))
        future.add_done_callback(lambda done: self.method_queue.defer(self.finish_request, conn, done))

    def _progress(self, conn, request: _Arriving) -> str:
        """WHOLE once the request is all here (or is gunicorn's to judge as it is), REFUSED_TOO_LARGE
        once enough of a body over the limit has been dropped, else WAITING."""
        if request.head_end is None:
            if not request.find_head_end():
                return WHOLE if len(request.buffer) > self.longest_head else WAITING
            request.deadline = time.monotonic() + self.settings.request_body_timeout_seconds
            framing = request.framing
            if framing.kind == "too_large":
                if framing.expects_continue:
                    return REFUSED_TOO_LARGE                   # before the client sends any of it
                request.drop_body(min(framing.length, MAX_DRAIN_BYTES))
            elif framing.expects_continue and request.body_state() == WAITING:
                _send_quietly(conn, b"HTTP/1.1 100 Continue\r\n\r\n")
        return request.body_state()

    def _on_readable(self, conn, _sock) -> None:
        self._read(conn)

    def _handle_read_request(self, conn, received: bytes):
        """In a thread: gunicorn's handling, its parser reading the request from what was read here."""
        conn.data_ready = True              # gunicorn's own wait for a first byte is over
        conn.sock.setblocking(True)
        conn.init()
        conn.parser.unreader.unread(received)
        return self.handle(conn)

    def _forget(self, conn) -> None:
        request = self.arriving.pop(conn)
        ARRIVING.leave(request.client)
        if request.watched:
            self.poller.unregister(conn.sock)

    def _close(self, conn) -> None:
        self.nr_conns -= 1
        conn.close()

    def _refuse(self, conn, status: int, code: str, message: str) -> None:
        _send_quietly(conn, self.json_error(status, code, message))     # a few hundred bytes: one send
        self._close(conn)

    def murder_pending(self):
        """Each turn of the event loop (at least once a second): end the requests past their deadline."""
        super().murder_pending()
        now = time.monotonic()
        for conn, request in list(self.arriving.items()):
            if not request.buffer and now >= request.idle_until:
                self._forget(conn)
                self._close(conn)
            elif request.dropping is not None and now >= request.deadline:
                self._forget(conn)          # a slow body over the limit: its answer is the same
                self._refuse(conn, 413, "request_too_large", "Request bodies are limited to 64 KiB.")
            elif request.buffer and now >= request.deadline:
                self._forget(conn)
                part, seconds = (("headers", self.settings.request_header_timeout_seconds) if request.head_end is None
                                 else ("body", self.settings.request_body_timeout_seconds))
                self._refuse(conn, 408, "request_timeout", f"The request's {part} did not arrive within {seconds} seconds.")


def _send_quietly(conn, data: bytes) -> None:
    try:
        conn.sock.setblocking(False)
        conn.sock.send(data)
    except OSError:
        pass            # the client has gone, or cannot take it: what follows copes


def _address(client) -> str | None:
    """The peer's address: (host, port[, flow, scope]) on TCP; a UNIX socket has none."""
    return client[0] if isinstance(client, (tuple, list)) and client else None
