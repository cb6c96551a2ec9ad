"""RQ job entry points, one module per queue (webhooks, chain, settlement, maintenance, mail).

Jobs take ids and primitives only, borrow a database connection per job, and call services.
`ensure_runtime()` attaches the database and Redis once per worker process (after the fork);
`@measured` gives every job one JSON log line and its duration and outcome in /metrics.
"""
import functools
import logging
import os
import time

from bootstrap import init_runtime
from config import load_settings

log = logging.getLogger("tender.job")
# A job that succeeds logs at INFO: one line per job is what an rq worker's operator reads. The
# embedded runtime of `make run` says it at DEBUG, so its sweeps every 2 s leave the first screen
# (the URL and the demo key) in view; LOG_LEVEL=DEBUG shows them.
_state = {"settings": None, "success_level": logging.INFO}


def ensure_runtime():
    """The process's settings, initialising the runtime on first use (worker processes)."""
    if _state["settings"] is None:
        settings = load_settings(os.environ)
        init_runtime(settings)
        _state["settings"] = settings
    return _state["settings"]


def use_runtime(settings, *, quiet_successes: bool = False) -> None:
    """Adopt an already-initialised runtime (the web process's embedded worker, tests);
    `quiet_successes`: log a job that succeeds at DEBUG."""
    _state["settings"] = settings
    _state["success_level"] = logging.DEBUG if quiet_successes else logging.INFO


def provider():
    """This process's swap provider (providers.shared)."""
    import providers

    return providers.shared(ensure_runtime())


def measured(job):
    """Log one line per run (job id, outcome, duration) and record it in the metrics."""
    @functools.wraps(job)
    def run(*args, **kwargs):
        from rq import get_current_job

        from infra import metrics

        started, outcome = time.perf_counter(), "failed"
        try:
            result = job(*args, **kwargs)
            outcome = "succeeded"
            return result
        finally:
            seconds = time.perf_counter() - started
            current = get_current_job()
            metrics.observe_job(job.__name__, outcome, seconds)
            metrics.flush()         # a fork-per-job work horse exits right after the job
            level = _state["success_level"] if outcome == "succeeded" else logging.INFO
            log.log(level, "job %s %s", job.__name__, outcome, extra={"fields": {
                "job_id": current.id if current else None, "job": job.__name__, "outcome": outcome,
                "duration_ms": round(seconds * 1000, 2)}})
    return run
