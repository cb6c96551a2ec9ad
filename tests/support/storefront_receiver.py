"""A reference storefront receiver for tests: a real HTTP server on 127.0.0.1 built on
kit/tender_receiver.py, doing what the WooCommerce plugin does (docs/integrations/woocommerce.md):
verify, dedupe on the event id, and mark the order paid on `invoice.paid`.

    with StorefrontReceiver() as shop:
        body = connect(..., webhook_url=shop.url)
        shop.configure(secret=body["webhook_secret"], integration_id=body["integration_public_id"])
        ...
        shop.wait_for_answers(2)
        assert shop.paid_orders == {"wc-1001": 1}
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import json
import threading
import time

from kit.tender_receiver import MemorySeenStore, Receiver


@dataclass
class Exchange:
    headers: dict
    body: bytes
    status: int
    answer: dict


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_POST(self):
        shop = self.server.shop
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = dict(self.headers.items())
        status, answer = shop.receiver.handle(headers, body)
        payload = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        shop._record(Exchange(headers, body, status, answer))

    def log_message(self, *args):
        pass


class StorefrontReceiver:
    def __init__(self, path: str = "/?wc-api=tender"):
        self.path = path
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.shop = self
        self.exchanges: list[Exchange] = []
        self.paid_orders: Counter = Counter()       # external_order_id -> times the paid action ran
        self.events_acted_on: list[str] = []
        self.seen = MemorySeenStore()
        self.receiver = Receiver(secret="", integration_id="", on_event=self._on_event, seen=self.seen)
        self._condition = threading.Condition()
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.path}"

    def configure(self, *, secret: str, integration_id: str) -> None:
        """What the plugin stores from the connect response."""
        self.receiver.secret, self.receiver.integration_id = secret, integration_id

    def _on_event(self, event: dict) -> None:
        # The plugin's payment-complete action (the real plugin re-fetches the invoice first).
        self.events_acted_on.append(event["id"])
        invoice = event["data"]["object"]
        if event["type"] == "invoice.paid" and invoice["status"] == "paid":
            self.paid_orders[invoice["external_order_id"]] += 1

    def _record(self, exchange: Exchange) -> None:
        with self._condition:
            self.exchanges.append(exchange)
            self._condition.notify_all()

    def wait_for_answers(self, count: int, *, timeout: float = 15.0) -> list[Exchange]:
        deadline = time.monotonic() + timeout
        with self._condition:
            while len(self.exchanges) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"storefront: {len(self.exchanges)} of {count} deliveries within {timeout} s")
                self._condition.wait(remaining)
            return list(self.exchanges)
