"""Nudges: an RQ job enqueued after commit so due work runs now rather than at the next tick.

`nudge()` may be called inside a transaction: the job is enqueued once the outermost transaction
commits, and not at all if it rolls back (models/after_commit.py).

The database stays the truth (the scheduler's sweeps find the work anyway); a lost or duplicate
nudge is harmless. A burst of nudges is thinned to one per job per second by a Redis key set with
NX (RQ's `unique=True` needs Lua, which the embedded fakeredis lacks).
"""
from __future__ import annotations

import logging

from models.after_commit import on_commit
from services import queues

log = logging.getLogger("tender.nudges")


def nudge(queue_name: str, func_path: str) -> None:
    on_commit(lambda: _enqueue_once(queue_name, func_path))


def _enqueue_once(queue_name: str, func_path: str) -> bool:
    connection = queues.redis()
    try:
        if not connection.set(f"tender:nudge:{func_path}", "1", nx=True, ex=1):
            return False                       # one was just sent: it will see our work too
        queues.queue(queue_name).enqueue(
            func_path, result_ttl=0, failure_ttl=3600, ttl=60)
        return True
    except Exception as error:  # Redis down: the sweep will do it; the request must not fail for it
        log.warning("nudge %s on %s not sent: %s", func_path, queue_name, error)
        return False
