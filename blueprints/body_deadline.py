"""A request's body must have arrived within REQUEST_BODY_TIMEOUT_SECONDS of its start.

Under gunicorn, Tender's worker class reads bodies up to 64 KiB before a thread takes the request
(blueprints/request_reading.py); what remains for this watchdog is a body over that (which the app
refuses 413 after discarding up to 1 MiB of it) and any server that hands over requests unread.

gunicorn gives a request to one of its few threads once the headers are in, and the thread then
waits for the body for as long as the client keeps the connection open. A client that announces a
body and never sends it, or sends it a byte at a time, would hold that thread; a handful of them
(anonymous ones on the buyer routes too) would stall every store's requests.

So one watchdog thread per process looks at each body at its deadline:
* a read still waiting for the client then is cut: the watchdog shuts the connection's read side,
  the blocked read sees the end of the stream, and the request is answered 408 `request_timeout`;
* a body the app has not started reading yet (it was busy: the client is not late for that) gets
  LATE_READ_SECONDS more, again and again while the app is busy; what the client sent in time is
  already here and reads at once, so only a read that waits on the client is ever cut.
A body read to its end is no longer watched. While it arrives, it counts among its client's arriving
requests (blueprints/arriving_requests.py); a client already at its bound gets 429 `rate_limited`
when the app asks for the body, instead of a thread waiting on one more of its bodies. This needs the connection's socket, which gunicorn
puts in the environ; under any other server (Flask's test client) the middleware stands aside.

A body whose chunked framing gunicorn's parser refuses when the app reads it (a bad chunk size) is
the client's bad input: 400 `validation_error`, as gunicorn's own refusals of framing are.

An answer given before the body was read to its end (a 413, a 408, a body sent with a GET) says
`Connection: close`, and the connection is closed after it: gunicorn would otherwise announce
keep-alive, then drop the connection when the rest of the body is too long to discard (64 KiB) or
slow to arrive, and a client's next request on it would get no answer at all.
"""
from __future__ import annotations

import socket
import threading
import time

from gunicorn.http.errors import ParseException

from blueprints.arriving_requests import ARRIVING
from core.errors import BadRequest, RequestTimeout, TooManyRequests

LATE_READ_SECONDS = 1.0


class BodyDeadline:
    """WSGI middleware: watches each request that has a body while the app runs."""

    def __init__(self, app, seconds: float, per_client: int = 0):
        self.app = app
        self.seconds = seconds
        self.per_client = per_client
        self.watchdog = _Watchdog()

    def __call__(self, environ, start_response):
        connection, length = environ.get("gunicorn.socket"), _content_length(environ)
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if connection is None or not (length or chunked):
            return self.app(environ, start_response)
        client = ARRIVING.enter(environ.get("REMOTE_ADDR"), self.per_client)
        body = _DeadlineInput(environ["wsgi.input"], connection, self.seconds, length,
                              on_complete=self._forget, refused=client is None)
        body.client = client
        environ["wsgi.input"] = body
        if client is not None:
            self.watchdog.watch(body, time.monotonic() + self.seconds)

        def start_closing_if_unread(status, headers, exc_info=None):
            if not body.complete:
                _close_after_answer(start_response)
            return start_response(status, headers, exc_info)

        try:
            return self.app(environ, start_closing_if_unread)
        finally:
            self._forget(body)

    def _forget(self, body: _DeadlineInput) -> None:
        """The body is in, or the request over: no longer watched, no longer arriving."""
        self.watchdog.forget(body)
        client, body.client = body.client, None
        if client is not None:
            ARRIVING.leave(client)


def _close_after_answer(start_response) -> None:
    """gunicorn drops an app's own `Connection` header (hop-by-hop); its response object, whose
    method start_response is, says `Connection: close` and closes once told to."""
    response = getattr(start_response, "__self__", None)
    if hasattr(response, "force_close"):
        response.force_close()


def _content_length(environ) -> int | None:
    try:
        return int(environ.get("CONTENT_LENGTH") or "")
    except ValueError:
        return None


class _DeadlineInput:
    """The request's input stream. `reading` says whether a read may be waiting on the client now;
    once the watchdog has cut the connection (`cut`), a read that did not complete the body is the 408."""

    def __init__(self, stream, connection: socket.socket, seconds: float, length: int | None, *, on_complete,
                 refused: bool = False):
        self.stream = stream
        self.connection = connection
        self.seconds = seconds
        self.left = length          # None: chunked, complete at the end of the stream
        self.on_complete = on_complete
        self.reading = self.cut = self.complete = False
        self.refused = refused      # its client has too many requests arriving: never read it
        self.client: str | None = None

    def read(self, *args):
        return self._checked(self.stream.read, *args)

    def readline(self, *args):
        return self._checked(self.stream.readline, *args)

    def _checked(self, read, *args):
        if self.refused:
            raise TooManyRequests("rate_limited", "Too many requests from this client are still arriving; "
                                  "retry when they have.")
        self.reading = True
        try:
            data = read(*args)
        except Exception as error:
            if self.cut:
                raise self._late() from None
            if isinstance(error, ParseException):   # gunicorn's parser refused the body (a bad chunk size)
                raise BadRequest("validation_error", f"Bad Request: the request body's framing is malformed "
                                 f"({type(error).__name__}).") from None
            raise
        finally:
            self.reading = False
        if self.left is not None:
            self.left -= len(data)
        complete = not data or (self.left is not None and self.left <= 0)
        if self.cut and not complete:       # what arrived before the cut is not the whole body
            raise self._late()
        if complete:
            self.complete = True
            self.on_complete(self)
        return data

    def _late(self) -> RequestTimeout:
        return RequestTimeout("request_timeout", f"The request body did not arrive within {self.seconds:g} seconds.")

    def cut_if_waiting(self) -> bool:
        """At the deadline (the watchdog's thread): cut a read that waits on the client, and say so."""
        if not self.reading:
            return False
        self.cut = True
        try:
            self.connection.shutdown(socket.SHUT_RD)     # the answer can still be written
        except OSError:
            pass                                         # the client has gone already
        return True


class _Watchdog:
    """One thread per process, started on first use (after gunicorn forks), idle while nothing is due."""

    def __init__(self):
        self.due: dict[_DeadlineInput, float] = {}
        self.changed = threading.Condition()
        self.thread: threading.Thread | None = None

    def watch(self, body: _DeadlineInput, deadline: float) -> None:
        with self.changed:
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="body-deadline", daemon=True)
                self.thread.start()
            idle = not self.due
            self.due[body] = deadline
            if idle:        # else it already waits for a deadline no later than this one
                self.changed.notify()

    def forget(self, body: _DeadlineInput) -> None:
        with self.changed:
            self.due.pop(body, None)

    def _run(self) -> None:
        with self.changed:
            while True:
                now = time.monotonic()
                for body, deadline in list(self.due.items()):
                    if deadline <= now:
                        if body.cut_if_waiting():
                            del self.due[body]
                        else:       # the app has not asked for the body yet
                            self.due[body] = now + LATE_READ_SECONDS
                next_deadline = min(self.due.values(), default=None)
                self.changed.wait(None if next_deadline is None else max(next_deadline - now, 0.01))
