"""A merchant's webhook receiver for the benchmarks and the cluster check: answers every POST 200,
after `latency_ms` if given (a receiver that takes its time, so delivery waits on I/O), and records
each event's id and type with its arrival time (monotonic).

    python -m bench.receiver PORT LATENCY_MS     # on 127.0.0.1, until stopped (bench/scaling.py)
"""
from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import json
import sys
import threading
import time


class EventReceiver:
    def __init__(self, host: str, port: int, *, latency_ms: int = 0, record: bool = True):
        self.events: list[tuple[str, str, float]] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if latency_ms:
                    time.sleep(latency_ms / 1000)
                if record:
                    receiver.record(body)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 512

        self.server = Server((host, port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def record(self, body: bytes) -> None:
        try:
            event = json.loads(body)
            with self.lock:
                self.events.append((event["id"], event["type"], time.monotonic()))
        except (ValueError, KeyError, TypeError):
            pass

    def start(self) -> "EventReceiver":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()


if __name__ == "__main__":
    EventReceiver("127.0.0.1", int(sys.argv[1]), latency_ms=int(sys.argv[2]), record=False).server.serve_forever()
