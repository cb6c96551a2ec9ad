"""Service-wide metrics kept in Redis, rendered as Prometheus text by GET /metrics.

Web and worker processes run on any number of machines and workers serve no HTTP, so each
process adds to shared counters (HINCRBY) instead of exposing its own; any web process can then
show the whole service. Increments are summed in the process and flushed in one pipeline at most
once a second (and at every scrape and job end), so a request pays no Redis round trip for them.
Recording never fails the work it measures: Redis errors are ignored.
"""
from __future__ import annotations

import bisect
import collections
import logging
import threading
import time

import redis as redis_lib

from services import queues

log = logging.getLogger("tender.metrics")
PREFIX = "tender:metrics:"
# Latency buckets in seconds, Prometheus-style upper bounds.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_SEPARATOR = "\x1f"   # joins label values inside one hash field; never in a route or status


def _field(*labels) -> str:
    return _SEPARATOR.join(str(label) for label in labels)


FLUSH_SECONDS = 1.0
_pending = collections.Counter()      # (command, key, field) -> amount not yet in Redis
_lock = threading.Lock()
_last_flush = {"at": time.monotonic()}


def _record(commands) -> None:
    with _lock:
        for command, key, field, amount in commands:
            _pending[(command, key, field)] += amount
        due = time.monotonic() - _last_flush["at"] >= FLUSH_SECONDS
    if due:
        flush()


def flush() -> None:
    """Send this process's pending increments to Redis in one pipeline."""
    with _lock:
        batch = dict(_pending)
        _pending.clear()
        _last_flush["at"] = time.monotonic()
    if not batch:
        return
    try:
        pipeline = queues.redis().pipeline(transaction=False)
        for (command, key, field), amount in batch.items():
            getattr(pipeline, command)(key, field, amount)
        pipeline.execute()
    except (redis_lib.RedisError, OSError) as error:
        log.debug("metrics not recorded: %s", error)


def _timing(name: str, labels: tuple, seconds: float) -> list:
    bucket = BUCKETS[bisect.bisect_left(BUCKETS, seconds)] if seconds <= BUCKETS[-1] else "+Inf"
    return [("hincrby", PREFIX + name + ":bucket", _field(*labels, bucket), 1),
            ("hincrbyfloat", PREFIX + name + ":sum", _field(*labels), seconds),
            ("hincrby", PREFIX + name + ":count", _field(*labels), 1)]


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    labels = (method, route, status)
    _record([("hincrby", PREFIX + "requests", _field(*labels), 1)] + _timing("request_seconds", labels, seconds))


def observe_job(job: str, outcome: str, seconds: float) -> None:
    _record([("hincrby", PREFIX + "jobs", _field(job, outcome), 1)] + _timing("job_seconds", (job,), seconds))


def count(name: str, *labels) -> None:
    """Bump a plain counter: webhook delivery outcomes, invoice state moves."""
    add(name, {labels: 1})


def add(name: str, increments: dict) -> None:
    """Bump several label sets of one counter in one round trip: {(label, ...): n}."""
    if increments:
        _record([("hincrby", PREFIX + name, _field(*labels), n) for labels, n in increments.items()])


# name in Redis -> (Prometheus family, type, help, label names)
_COUNTERS = {
    "requests": ("tender_http_requests_total", "HTTP requests by route and status.", ("method", "route", "status")),
    "jobs": ("tender_jobs_total", "RQ jobs finished, by job and outcome.", ("job", "outcome")),
    "webhook_deliveries": ("tender_webhook_delivery_attempts_total", "Webhook delivery attempts by outcome.",
                           ("outcome",)),
    "invoice_moves": ("tender_invoice_moves_total", "Invoice state moves applied, by trigger and new status.",
                      ("trigger", "status")),
    "invoices_held": ("tender_invoices_held_total", "Invoices set aside for review, by reason.", ("reason",)),
}
_HISTOGRAMS = {
    "request_seconds": ("tender_http_request_duration_seconds", "HTTP request latency.", ("method", "route", "status")),
    "job_seconds": ("tender_job_duration_seconds", "RQ job duration.", ("job",)),
}


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(names, values, extra=()) -> str:
    pairs = list(zip(names, values)) + list(extra)
    return "{" + ",".join(f'{name}="{_escape(str(value))}"' for name, value in pairs) + "}"


def _hash(connection, name) -> dict:
    return {key.decode(): value.decode() for key, value in connection.hgetall(PREFIX + name).items()}


def _render_histogram(lines, connection, name, family, help_text, names) -> None:
    lines += [f"# HELP {family} {help_text}", f"# TYPE {family} histogram"]
    buckets, sums, counts = (_hash(connection, f"{name}:{part}") for part in ("bucket", "sum", "count"))
    for key, total in sorted(counts.items()):
        values = key.split(_SEPARATOR)
        cumulative = 0
        for bound in BUCKETS + ("+Inf",):
            cumulative += int(buckets.get(_field(*values, bound), 0))
            lines.append(f"{family}_bucket{_labels(names, values, [('le', bound)])} {cumulative}")
        lines.append(f"{family}_sum{_labels(names, values)} {float(sums.get(key, 0))}")
        lines.append(f"{family}_count{_labels(names, values)} {total}")


def render(queue_depths: dict) -> str:
    """Prometheus text exposition of everything recorded, plus the queue depths given."""
    flush()
    connection = queues.redis()
    lines = ["# HELP tender_queue_jobs Jobs in each RQ queue and registry.", "# TYPE tender_queue_jobs gauge"]
    for (queue, state), depth in sorted(queue_depths.items()):
        lines.append(f"tender_queue_jobs{_labels(('queue', 'state'), (queue, state))} {depth}")
    for name, (family, help_text, names) in _COUNTERS.items():
        lines += [f"# HELP {family} {help_text}", f"# TYPE {family} counter"]
        for key, value in sorted(_hash(connection, name).items()):
            lines.append(f"{family}{_labels(names, key.split(_SEPARATOR))} {value}")
    for name, (family, help_text, names) in _HISTOGRAMS.items():
        _render_histogram(lines, connection, name, family, help_text, names)
    return "\n".join(lines) + "\n"


def queue_depths() -> dict:
    """(queue, state) -> number of jobs, for every Tender queue."""
    depths = {}
    for name in queues.QUEUE_NAMES:
        queue = queues.queue(name)
        depths[(name, "queued")] = queue.count
        for state, registry in (("started", queue.started_job_registry), ("failed", queue.failed_job_registry),
                                ("scheduled", queue.scheduled_job_registry), ("deferred", queue.deferred_job_registry)):
            depths[(name, state)] = registry.count
    return depths
