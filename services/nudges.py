"""Nudges: an RQ job enqueued after commit so due work runs now rather than at the next tick.

The database stays the truth (the scheduler's sweeps find the work anyway); a lost or duplicate
nudge is harmless. Job ids are fixed per job, so a burst of nudges is one queued job.
"""
from __future__ import annotations

import logging

from rq import Queue
from rq.exceptions import DuplicateJobError
from rq.serializers import JSONSerializer

from services import queues

log = logging.getLogger("tender.nudges")


def nudge(queue_name: str, func_path: str) -> None:
    job_id = "nudge-" + func_path.replace(".", "-").replace("_", "-")
    try:
        Queue(queue_name, connection=queues.redis(), serializer=JSONSerializer).enqueue(
            func_path, job_id=job_id, unique=True, result_ttl=0, failure_ttl=3600)
    except DuplicateJobError:
        pass                                   # one is already waiting: it will see our work too
    except Exception as error:  # Redis down: the sweep will do it; the request must not fail for it
        log.warning("nudge %s on %s not sent: %s", func_path, queue_name, error)
