"""Receive Tender webhook deliveries on a storefront: verify them, and run each event's action once.

Standard library only: copy this one file into a plugin, a worker or a test. The rules it applies
are receiver rules 4-6 (docs/integrations/woocommerce.md walks through all six):

    receiver = Receiver(secret=WEBHOOK_SECRET, integration_id="int_…", on_event=handle,
                        seen=SQLiteSeenStore("/var/lib/shop/tender-events.db"))
    status, answer = receiver.handle(request_headers, raw_body)   # answer is a dict to send as JSON

1. The signature: `X-Tender-Signature: v1=<hex>[,v1=<hex>]`, each HMAC-SHA256 keyed with the
   webhook secret's UTF-8 bytes over "{X-Tender-Timestamp}.{raw body}"; any v1 value may match
   (two are sent for 24 hours after credentials are re-issued).
2. `X-Tender-Integration-Id` must be the `int_…` id this installation stored at connect.
3. `X-Tender-Timestamp` must be within 300 seconds of the receiver's clock.
4. The event id (`X-Tender-Event-Id`, equal to the body's `id`) is claimed in a seen-store before
   the action runs: a repeat answers `{"duplicate": true}` (200, so Tender stops retrying) and the
   action does not run again. If the action raises, the claim is released and the answer is a
   500, so Tender retries and the next attempt runs the action.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import sqlite3
import threading
import time
from typing import Callable, Mapping, Protocol

TOLERANCE_SECONDS = 300
SIGNATURE_HEADER = "X-Tender-Signature"
TIMESTAMP_HEADER = "X-Tender-Timestamp"
EVENT_ID_HEADER = "X-Tender-Event-Id"
INTEGRATION_ID_HEADER = "X-Tender-Integration-Id"


class Rejected(Exception):
    """A delivery that must not be acted on. `status` is what to answer (any non-2xx makes Tender
    retry; a forged delivery gets nothing but the refusal)."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def sign(secret: str, timestamp: int | str, body: bytes) -> str:
    """The hex HMAC-SHA256 Tender puts after `v1=`."""
    message = str(int(timestamp)).encode("ascii") + b"." + body
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def _header(headers: Mapping[str, str], name: str) -> str | None:
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    return None


def verify(headers: Mapping[str, str], body: bytes, *, secret: str, integration_id: str,
           now: float | None = None, tolerance: int = TOLERANCE_SECONDS) -> dict:
    """The verified event (the parsed body), or Rejected. `body` is the raw bytes as received:
    re-serialised JSON does not match the signature."""
    timestamp_text = _header(headers, TIMESTAMP_HEADER) or ""
    if not timestamp_text.isdigit():
        raise Rejected(400, "missing or malformed X-Tender-Timestamp")
    timestamp = int(timestamp_text)
    expected = sign(secret, timestamp, body)
    values = [part.strip()[3:] for part in (_header(headers, SIGNATURE_HEADER) or "").split(",")
              if part.strip().startswith("v1=")]
    if not any(hmac.compare_digest(expected, value) for value in values):
        raise Rejected(401, "signature does not match")
    if not hmac.compare_digest(_header(headers, INTEGRATION_ID_HEADER) or "", integration_id):
        raise Rejected(403, "X-Tender-Integration-Id is not this installation's")
    now = time.time() if now is None else now
    if abs(now - timestamp) > tolerance:
        # Signed, but old (or from the future): a replay of a captured delivery.
        raise Rejected(401, f"timestamp is more than {tolerance} seconds off")
    try:
        event = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise Rejected(400, "body is not JSON") from None
    if not isinstance(event, dict) or not isinstance(event.get("id"), str):
        raise Rejected(400, "body is not a Tender event")
    if _header(headers, EVENT_ID_HEADER) != event["id"]:
        raise Rejected(400, "X-Tender-Event-Id does not match the body's id")
    return event


class SeenStore(Protocol):
    """Remembers which event ids have been acted on. `claim` must be atomic: of two concurrent
    claims of one id, exactly one returns True."""

    def claim(self, event_id: str) -> bool: ...

    def release(self, event_id: str) -> None: ...


class MemorySeenStore:
    """For tests and single-process receivers; forgets on restart."""

    def __init__(self):
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def claim(self, event_id: str) -> bool:
        with self._lock:
            if event_id in self._seen:
                return False
            self._seen.add(event_id)
            return True

    def release(self, event_id: str) -> None:
        with self._lock:
            self._seen.discard(event_id)


class SQLiteSeenStore:
    """Durable across restarts and shared by processes on one machine (SQLite's own locking).
    The primary key makes the claim atomic: the INSERT either adds the row or changes nothing."""

    def __init__(self, path: str):
        self._path = path
        self._local = threading.local()
        with self._connection() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS tender_seen_event "
                         "(event_id TEXT PRIMARY KEY, seen_at INTEGER NOT NULL)")

    def _connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self._path, timeout=10)
            self._local.conn = conn
        return conn

    def claim(self, event_id: str) -> bool:
        with self._connection() as conn:
            cursor = conn.execute("INSERT OR IGNORE INTO tender_seen_event (event_id, seen_at) VALUES (?, ?)",
                                  (event_id, int(time.time())))
            return cursor.rowcount == 1

    def release(self, event_id: str) -> None:
        with self._connection() as conn:
            conn.execute("DELETE FROM tender_seen_event WHERE event_id = ?", (event_id,))


class Receiver:
    """Verify, dedupe, act: `handle()` returns the HTTP status and the JSON answer to send."""

    def __init__(self, *, secret: str, integration_id: str, on_event: Callable[[dict], None],
                 seen: SeenStore | None = None, tolerance: int = TOLERANCE_SECONDS,
                 clock: Callable[[], float] = time.time):
        self.secret = secret
        self.integration_id = integration_id
        self.on_event = on_event
        self.seen = seen if seen is not None else MemorySeenStore()
        self.tolerance = tolerance
        self.clock = clock

    def handle(self, headers: Mapping[str, str], body: bytes) -> tuple[int, dict]:
        try:
            event = verify(headers, body, secret=self.secret, integration_id=self.integration_id,
                           now=self.clock(), tolerance=self.tolerance)
        except Rejected as refusal:
            return refusal.status, {"error": refusal.reason}
        if not self.seen.claim(event["id"]):
            return 200, {"duplicate": True}
        try:
            self.on_event(event)
        except Exception:
            # Not done: forget the claim so Tender's retry runs the action.
            self.seen.release(event["id"])
            return 500, {"error": "the action failed; retry"}
        return 200, {"received": True}
