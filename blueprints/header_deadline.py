"""A request's head (request line and headers) must arrive within REQUEST_HEADER_TIMEOUT_SECONDS,
and is read without holding a thread.

gunicorn's threaded worker gives a connection to one of its few threads as soon as a byte arrives,
and the thread then reads the request line and headers, blocking, for as long as the client keeps
sending: one header line every few seconds holds a thread indefinitely, and eight such clients held
every thread of the default `web` (2 processes x 4 threads), /health included.

So this worker reads heads in its event loop, where gunicorn already waits on kept-alive connections:
a readable socket is read without blocking into the connection's buffer, and only once the buffer
holds the whole head (the empty line that ends it) does the connection go to a thread, the bytes put
back in front of gunicorn's own parser, which parses them as always. Nothing here interprets a
head: it only looks for its end, so gunicorn and Tender can never disagree about what was asked.
* A head not all in at its deadline is answered 408 `request_timeout` and the connection closed. A
  connection that has sent nothing is closed without an answer at the same time (after `keepalive`
  seconds when it has served a request already), as gunicorn closes idle connections.
* A client already at its bound of arriving requests (blueprints/arriving_requests.py) is answered
  429 `rate_limited` at once and the connection closed.
* A head longer than gunicorn accepts goes to gunicorn as it is, whose parser answers 431 or 414.
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
from blueprints.server_errors import JsonErrorsWorker

END_OF_HEAD = b"\r\n\r\n"


@dataclass
class _Head:
    client: str                 # whose arriving request this is (blueprints/arriving_requests.py)
    deadline: float             # the whole head must be in by then
    idle_until: float           # a connection that sent nothing by then is closed without an answer
    buffer: bytearray = field(default_factory=bytearray)
    searched: int = 0           # the buffer up to here holds no END_OF_HEAD
    watched: bool = False       # registered with the event loop

    def add(self, data: bytes) -> None:
        self.buffer += data

    def ready(self, longest: int) -> bool:
        """The head is all here (or is longer than gunicorn would accept, which it will say)."""
        found = self.buffer.find(END_OF_HEAD, max(self.searched - len(END_OF_HEAD) + 1, 0))
        self.searched = len(self.buffer)
        return found >= 0 or len(self.buffer) > longest


def longest_head(cfg) -> int:
    """The most bytes of request line and headers gunicorn's parser reads before refusing (431/414)."""
    line = cfg.limit_request_line if cfg.limit_request_line > 0 else 1024 * 1024
    return line + cfg.limit_request_fields * (cfg.limit_request_field_size + 2) + 4


class HeadersFirstWorker(JsonErrorsWorker):
    """gunicorn's threaded worker (gunicorn.conf.py) that hands a connection to a thread only with
    its head all read, and JSON for its own refusals (blueprints/server_errors.py)."""

    def init_process(self):
        self.heads: dict = {}               # connection -> _Head, for the connections being read
        self.longest_head = longest_head(self.cfg)
        super().init_process()              # runs the event loop

    def enqueue_req(self, conn):
        """Every way a connection reaches a thread comes here: new, kept alive and readable again,
        or holding bytes of its next request already. Read its head first."""
        if self.cfg.is_ssl or conn.is_http2 or negotiation.prior_knowledge_allowed(self.cfg, conn.client):
            return super().enqueue_req(conn)
        now, kept_alive = time.monotonic(), conn.parser is not None
        client = ARRIVING.enter(_address(conn.client), self.settings.arriving_requests_per_client)
        if client is None:
            self._refuse(conn, 429, "rate_limited",
                         "Too many requests from this client are still arriving; retry when they have.")
            return None
        head = _Head(client, deadline=now + self.settings.request_header_timeout_seconds,
                     idle_until=now + (self.cfg.keepalive if kept_alive else self.settings.request_header_timeout_seconds))
        self.heads[conn] = head
        if kept_alive:
            head.add(conn.parser.unreader.take_buffered())     # read ahead with the previous request
        conn.sock.setblocking(False)
        self._read_head(conn)
        return None

    def _read_head(self, conn) -> None:
        head = self.heads[conn]
        if not head.ready(self.longest_head):
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
                head.add(data)
            if not head.ready(self.longest_head):
                if not head.watched:
                    self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_readable, conn))
                    head.watched = True
                return
        self._forget(conn)
        future = self.tpool.submit(self._handle_with_head, conn, bytes(head.buffer))
        future.add_done_callback(lambda done: self.method_queue.defer(self.finish_request, conn, done))

    def _on_readable(self, conn, _sock) -> None:
        self._read_head(conn)

    def _handle_with_head(self, conn, head: bytes):
        """In a thread: gunicorn's handling, its parser reading the head from what was read here."""
        conn.data_ready = True              # gunicorn's own wait for a first byte is over
        conn.sock.setblocking(True)
        conn.init()
        conn.parser.unreader.unread(head)
        return self.handle(conn)

    def _forget(self, conn) -> None:
        head = self.heads.pop(conn)
        ARRIVING.leave(head.client)
        if head.watched:
            self.poller.unregister(conn.sock)

    def _close(self, conn) -> None:
        self.nr_conns -= 1
        conn.close()

    def _refuse(self, conn, status: int, code: str, message: str) -> None:
        try:
            conn.sock.setblocking(False)
            conn.sock.send(self.json_error(status, code, message))     # a few hundred bytes: one send
        except OSError:
            pass            # the client has gone, or cannot take an answer: closing is the answer
        self._close(conn)

    def murder_pending(self):
        """Each turn of the event loop (at least once a second): end the heads past their deadline."""
        super().murder_pending()
        now = time.monotonic()
        for conn, head in list(self.heads.items()):
            if not head.buffer and now >= head.idle_until:
                self._forget(conn)
                self._close(conn)
            elif head.buffer and now >= head.deadline:
                self._forget(conn)
                self._refuse(conn, 408, "request_timeout", "The request's headers did not arrive within "
                             f"{self.settings.request_header_timeout_seconds} seconds.")


def _address(client) -> str | None:
    """The peer's address: (host, port[, flow, scope]) on TCP; a UNIX socket has none."""
    return client[0] if isinstance(client, (tuple, list)) and client else None
