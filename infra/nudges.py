"""Nudges: an RQ job enqueued after commit so that due work runs now rather than at the next tick.

`nudge()` may be called inside a transaction: the job is enqueued once the outermost transaction
commits, and not at all if it rolls back (models/after_commit.py).

A burst costs one job: a flag in Redis (SET NX) means "a run of this job is queued and has not
started". The run clears it (`run_started`) before it looks at the database, so whatever is
committed after that look sets the flag again and gets a run of its own: nothing waits for the
next tick. The database stays the truth (the scheduler's sweeps find the work anyway), so a lost
nudge only delays; a flag whose job was lost expires by itself.
"""
from __future__ import annotations

import logging

import redis as redis_lib

from infra import queues
from models.after_commit import on_commit

log = logging.getLogger("tender.nudges")
FLAG_EXPIRY_MS = 10_000       # a flag whose job was lost (Redis hiccup) stops blocking nudges after this


def nudge(queue_name: str, job: str) -> None:
    """Run `job` (a dotted path) on `queue_name` soon after the caller's transaction commits."""
    on_commit(lambda: _enqueue_once(queue_name, job))


def flag(job: str) -> str:
    return f"tender:nudge:{job}"


def _enqueue_once(queue_name: str, job: str) -> None:
    try:
        if queues.redis().set(flag(job), "1", nx=True, px=FLAG_EXPIRY_MS):
            queues.queue(queue_name).enqueue(job, result_ttl=0, failure_ttl=3600, ttl=60)
    except redis_lib.RedisError as error:  # the sweep will do it; the request must not fail for it
        log.warning("%s not nudged on %s (%s); the scheduler's sweep will run it", job, queue_name, error)


def run_started(job: str) -> None:
    """Called by a nudged run before it looks at the database (see above)."""
    try:
        queues.redis().delete(flag(job))
    except redis_lib.RedisError:
        pass        # the flag expires by itself
