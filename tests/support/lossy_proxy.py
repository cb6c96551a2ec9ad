"""A forwarding HTTP proxy on 127.0.0.1 that loses one answer: the request reaches the server and
is committed there, but the client never hears back (the connection is closed instead). For
testing what a client does about a lost answer, with the real server behind it."""
from __future__ import annotations

import http.client
import socket
import threading

from tests.support.raw_http import read_answer

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class AnswerLosingProxy:
    def __init__(self, target_port: int, *, lose_once: str):
        """Forward to 127.0.0.1:`target_port`; the first answer to a request for path `lose_once`
        is dropped."""
        self.target_port = target_port
        self.lose_once = lose_once
        self.lost: list[tuple[str, int]] = []            # (path, status the server answered)
        self.forwarded: list[str] = []
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> "AnswerLosingProxy":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._server.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except socket.timeout:
                continue
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        with client:
            client.settimeout(15)
            head, _, body = read_answer(client, request=True).partition(b"\r\n\r\n")
            request_line, *header_lines = head.decode("latin-1").split("\r\n")
            method, path, _ = request_line.split(" ", 2)
            headers = dict(line.split(": ", 1) for line in header_lines if ": " in line)
            upstream = http.client.HTTPConnection("127.0.0.1", self.target_port, timeout=15)
            upstream.request(method, path, body=body or None,
                             headers={k: v for k, v in headers.items() if k.lower() not in _HOP_BY_HOP})
            answer = upstream.getresponse()
            payload = answer.read()
            upstream.close()
            if path.split("?")[0] == self.lose_once and not self.lost:
                self.lost.append((path, answer.status))
                return                                   # committed upstream; the client hears nothing
            self.forwarded.append(path)
            lines = [f"HTTP/1.1 {answer.status} {answer.reason}"]
            lines += [f"{k}: {v}" for k, v in answer.getheaders() if k.lower() not in _HOP_BY_HOP]
            lines += [f"Content-Length: {len(payload)}", "Connection: close"]
            client.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload)
