"""A delivery run's attempts in flight (webhook_delivery.py): started on the process's sending
threads (webhook_sending.send, no database), at most a window of them at once, and their
outcomes handed back as they finish.
"""
from __future__ import annotations

import collections
from concurrent.futures import ThreadPoolExecutor
import os
import queue
import threading
import time

from services.webhooks.delivery_policy import DeliveryPolicy
from services.webhooks.webhook_sending import Outcome, Work, send, shared_connections

FIRST_WINDOW = 2            # attempts a run starts at once, until the receivers prove slow
STALL_SECONDS = 0.025       # no attempt finished for this long while others wait: twice as many at once


class SendingWindow:
    """A run's attempts: started on the process's sending threads, at most `window` at once.

    Receivers that answer within milliseconds gain nothing from more attempts at once (on two
    cores, 16 threads posting together took longer than the same posts two at a time), so a run
    starts two, and starts the next as one finishes; whenever no attempt has finished for
    STALL_SECONDS while others wait, the window doubles, up to the run's concurrency. Slow or
    hanging receivers therefore hold up the others by at most a few times STALL_SECONDS (all 32
    slots are in use within 0.1 s). Whatever waits here is already claimed: it counts against
    the run's slots and the caps like an attempt in flight."""

    def __init__(self, policy: DeliveryPolicy):
        self._connections, self._policy, self._pool = shared_connections(policy), policy, _sending_pool()
        self._queued: collections.deque = collections.deque()
        self._in_flight: dict = {}
        self._window = min(FIRST_WINDOW, policy.concurrency)
        self._progress = time.monotonic()
        # Finished attempts come back through a queue: waiting on all the futures at once cost
        # the run a pass over every one of them (and their locks) per attempt that finished.
        self._done = queue.SimpleQueue()

    @property
    def held(self) -> int:
        return len(self._in_flight) + len(self._queued)

    def start(self, claimed: list[Work]) -> None:
        self._queued.extend(claimed)
        self._launch()

    def _launch(self) -> None:
        while self._queued and len(self._in_flight) < self._window:
            future = self._pool.submit(send, self._connections, self._queued.popleft(), self._policy)
            self._in_flight[future] = True
            future.add_done_callback(self._done.put)

    def wait(self, until: float | None) -> list[Outcome]:
        """The outcomes of attempts that finished by `until` (a monotonic time; None: no limit),
        at least one unless that came first."""
        while True:
            wakes = [until] if until is not None else []
            if self._queued:
                wakes.append(self._progress + STALL_SECONDS)
            timeout = max(0.0, min(wakes) - time.monotonic()) if wakes else None
            try:
                done = [self._done.get(timeout=timeout)]
            except queue.Empty:
                if self._queued and time.monotonic() - self._progress >= STALL_SECONDS:
                    self._window = min(self._policy.concurrency, self._window * 2)
                    self._progress = time.monotonic()
                    self._launch()
                if until is not None and time.monotonic() >= until:
                    return []
                continue
            while not self._done.empty():
                done.append(self._done.get())
            self._progress = time.monotonic()
            for future in done:
                del self._in_flight[future]
            self._launch()
            return [future.result() for future in done]

    def all_started(self) -> list:
        """Start whatever still waits (the run is ending) and return every attempt in flight."""
        self._window = max(self._window, len(self._in_flight) + len(self._queued))
        self._launch()
        return list(self._in_flight)


# Sending threads are kept for the process's life: starting them per run cost a third of a
# fan-out run (a thread start waits for the thread to run, on cores the sends keep busy). The
# cap is far above any run's slots, so an attempt never queues behind another run's (a run that
# ran out of time leaves its slow attempts to a finisher): a thread is started only when none
# is idle, and what a run keeps in flight stays bounded by its `concurrency`.
SENDING_THREADS_CAP = 512
_pools: dict = {}
_pools_lock = threading.Lock()


def _sending_pool() -> ThreadPoolExecutor:
    """The process's pool of sending threads; a forked child builds its own (threads do not
    survive a fork)."""
    with _pools_lock:
        pool = _pools.get(os.getpid())
        if pool is None:
            _pools.clear()
            pool = _pools[os.getpid()] = ThreadPoolExecutor(max_workers=SENDING_THREADS_CAP,
                                                            thread_name_prefix="webhook")
        return pool
