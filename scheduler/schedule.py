"""The schedule itself, free of import side effects: shared by `rq cron` (scheduler/cron.py) and
the embedded scheduler thread (jobs/embedded.py)."""
from __future__ import annotations

from rq import Queue
from rq.serializers import JSONSerializer

from jobs.chain import poll_deposits
from jobs.maintenance import sweep_expired_invoices
from jobs.settlement import poll_settlements

# Generous timeouts: a sweep stops claiming new work after ~20 s (services/polling.py).
JOB_TIMEOUT = 120


def sweeps(settings) -> list[dict]:
    """The schedule as `rq.cron.register` keyword arguments.

    A tick that waited in the queue longer than two intervals is dropped (`ttl`): a later tick
    does the same work, so a busy worker never builds a backlog of stale ticks.
    """
    def sweep(func, queue_name, interval):
        return {"func": func, "queue_name": queue_name, "interval": interval, "job_timeout": JOB_TIMEOUT,
                "result_ttl": 0, "failure_ttl": 86400, "ttl": 2 * interval + 5}

    return [
        sweep(poll_deposits, "chain", settings.chain_poll_interval_seconds),
        sweep(poll_settlements, "settlement", settings.settlement_poll_interval_seconds),
        sweep(sweep_expired_invoices, "maintenance", settings.expiry_sweep_interval_seconds),
    ]


class JsonQueue(Queue):
    """RQ 3.0's cron enqueues through a plain `Queue` (pickle), while our workers read JSON
    (`--serializer json`); `rq cron --serializer` is accepted but not passed on. So the cron
    module's queue class is this one (checked by tests/jobs/test_scheduler.py)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("serializer", JSONSerializer)
        super().__init__(*args, **kwargs)


def use_json_queues() -> None:
    import rq.cron

    rq.cron.Queue = JsonQueue
