"""Heartbeats: a claim stays alive while its holder works and lapses within seconds once the holder dies.

A claim in the database (an `Idempotency-Key` in progress, a poll lease) carries a time, and
another process may take it over once that time is old. A long lease would make a dead holder's
work wait for it (a minute, before); a short one would be taken from a holder still at work. So
the lease is short and a living holder renews it: one thread per process calls every live claim's
`beat` each INTERVAL_SECONDS. A holder killed with SIGKILL, or cut off with its host, stops
beating, and its claim lapses a few seconds later (docs/operations.md#processes-that-die).

`beat()` is the claim's own compare-and-set and answers whether the claim is still the holder's:
once it says no (someone took the claim over), it is not called again. Renewing is best effort: a
beat that fails (the database unreachable for a moment) is tried again at the next interval.

Only on PostgreSQL. SQLite (the embedded default: one process) has one writer at a time, so a
renewal would wait behind whatever transaction holds the lock, stalling the holders it renews;
there a claim simply lapses, which every claim's compare-and-set makes safe.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from typing import Callable

from infra.database import on_postgres
from models.base import db

log = logging.getLogger("tender.heartbeats")

INTERVAL_SECONDS = 1.0
# How long a renewed claim lasts unrenewed: five missed beats, so a living holder on a loaded
# machine keeps its claims, and a dead one's lapse within seconds (delivery and mail claims).
RENEWED_LEASE_SECONDS = 5


class Beating:
    """One claim being kept alive. `stop()` when the work is done (it waits for a beat in progress,
    so nothing renews the claim afterwards); `lost` says a beat found the claim taken over."""

    def __init__(self, beat: Callable[[], bool]):
        self.beat = beat
        self.since = time.monotonic()
        self.lost = False
        self.stopped = False
        self._lock = threading.Lock()

    def stop(self) -> bool:
        """Stop renewing; returns False if a beat found the claim no longer ours."""
        with self._lock:
            self.stopped = True
        with _registry_lock:
            _live.discard(self)
        return not self.lost

    def _renew(self) -> None:
        with self._lock:
            if self.stopped or self.lost:
                return
            try:
                self.lost = not self.beat()
            except Exception as error:       # the next interval tries again; a lapse is safe, only slower
                log.warning("heartbeat failed, trying again in %.1f s: %s", INTERVAL_SECONDS, error)


_live: set[Beating] = set()
_registry_lock = threading.Lock()
_beater = {"thread": None, "pid": None}


def renewing() -> bool:
    """Whether claims are renewed here (PostgreSQL), so a short lease is safe."""
    return on_postgres()


def keep_alive(beat: Callable[[], bool]) -> Beating:
    """Renew a claim by calling `beat()` every INTERVAL_SECONDS until the returned Beating stops."""
    beating = Beating(beat)
    if not renewing():
        return beating
    with _registry_lock:
        _live.add(beating)
        thread = _beater["thread"]
        if thread is None or not thread.is_alive() or _beater["pid"] != os.getpid():   # a forked child has none
            thread = threading.Thread(target=_beat_forever, name="tender-heartbeats", daemon=True)
            _beater.update(thread=thread, pid=os.getpid())
            thread.start()
    return beating


def _beat_forever() -> None:
    while True:
        time.sleep(INTERVAL_SECONDS)
        due_before = time.monotonic() - INTERVAL_SECONDS / 2    # a claim a few ms old needs no beat yet
        with _registry_lock:
            due = [beating for beating in _live if beating.since <= due_before]
        if not due:
            continue
        try:
            with db.connection_context():
                for beating in due:
                    beating._renew()
        except Exception as error:          # no connection at all: the next interval tries again
            log.warning("heartbeats skipped: %s", error)
        with _registry_lock:
            _live.difference_update(beating for beating in due if beating.lost)
