"""How many requests each client still has arriving in this web process, under one bound.

A request is arriving while its headers are not all in (the worker reads them:
blueprints/request_reading.py) and again while the app waits for its body (blueprints/body_deadline.py).
Each costs the server something for as long as the client cares to make it last (a socket, a
buffer; a thread while a body arrives), so one client (core/client_addresses.py: an IPv4 address,
an IPv6 /64) may have at most ARRIVING_REQUESTS_PER_CLIENT of them at once, and the next is refused
at once. A well-behaved client's request is arriving for milliseconds, so the bound is only ever
met by clients that send slowly on purpose, or by a crowd behind one address (a proxy: hence no
bound by default when TRUSTED_PROXY_HOPS is set).

One count per process, shared by the worker's event loop and the app's threads.
"""
from __future__ import annotations

from collections import Counter
import threading

from core.client_addresses import client_of


class ArrivingRequests:
    def __init__(self):
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def enter(self, address: str | None, bound: int) -> str | None:
        """Count one more arriving request of `address`'s client and return the client, or None,
        counting nothing, when that client has `bound` arriving already (0: no bound)."""
        client = client_of(address)
        with self._lock:
            if bound and self._counts[client] >= bound:
                return None
            self._counts[client] += 1
        return client

    def leave(self, client: str) -> None:
        with self._lock:
            self._counts[client] -= 1
            if self._counts[client] <= 0:
                del self._counts[client]


ARRIVING = ArrivingRequests()
