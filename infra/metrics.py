"""Service-wide metrics kept in Redis, exposed through prometheus_client by GET /metrics.

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

from infra import queues

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


# Label values come from closed sets only, so no client can add series: a method outside this
# set is `other`, a path no URL rule matches is the route `unmatched` (blueprints/request_log.py).
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    labels = (method if method in KNOWN_METHODS else "other", route, status)
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
    "refund_moves": ("tender_refund_moves_total", "Merchant refund state moves applied, by trigger and new status.",
                     ("trigger", "status")),
    "invoices_held": ("tender_invoices_held_total", "Invoices set aside for review, by reason.", ("reason",)),
    "provider_reads": ("tender_provider_deposit_reads_total",
                       "Deposit status reads from the swap provider by the pollers, by phase and by whether the "
                       "invoice was hot (quoted in the last 15 minutes, or its money moving) or idle.",
                       ("phase", "temperature")),

    "provider_auth_failures": ("tender_provider_auth_failures_total",
                               "Swap provider answers refusing our credentials (401/403).", ("status",)),
    "exchange_rate_refreshes": ("tender_exchange_rate_refreshes_total",
                                "Rate source refreshes by source and outcome (ok, failed, resting: its breaker "
                                "is open).", ("source", "outcome")),
    "exchange_rate_unavailable": ("tender_exchange_rate_unavailable_total",
                                  "Quotes refused for want of a usable exchange rate, by currency.", ("currency",)),
    "exchange_rate_divergence": ("tender_exchange_rate_divergence_total",
                                 "Rates not used because two fresh sources disagreed, by currency.", ("currency",)),
}
_HISTOGRAMS = {
    "request_seconds": ("tender_http_request_duration_seconds", "HTTP request latency.", ("method", "route", "status")),
    "job_seconds": ("tender_job_duration_seconds", "RQ job duration.", ("job",)),
}


def _hash(connection, name) -> dict:
    return {key.decode(): value.decode() for key, value in connection.hgetall(PREFIX + name).items()}


class RedisCollector:
    """A prometheus_client collector over the Redis aggregation: every scrape reads the whole
    service's counters, whichever process records them. prometheus_client is imported on the first
    scrape, not at start-up: only operators' scrapes need it, and every process would pay for it."""

    def __init__(self, connection, queue_depths: dict):
        self.connection = connection
        self.queue_depths = queue_depths

    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        depths = GaugeMetricFamily("tender_queue_jobs", "Jobs in each RQ queue and registry.",
                                   labels=("queue", "state"))
        for (queue, state), depth in sorted(self.queue_depths.items()):
            depths.add_metric((queue, state), depth)
        yield depths
        for name, (family, help_text, names) in _COUNTERS.items():
            counter = CounterMetricFamily(family, help_text, labels=names)
            for key, value in sorted(_hash(self.connection, name).items()):
                counter.add_metric(key.split(_SEPARATOR), float(value))
            yield counter
        for name, (family, help_text, names) in _HISTOGRAMS.items():
            yield self._histogram(name, family, help_text, names)

    def _histogram(self, name, family, help_text, names):
        from prometheus_client.core import HistogramMetricFamily

        histogram = HistogramMetricFamily(family, help_text, labels=names)
        buckets, sums, counts = (_hash(self.connection, f"{name}:{part}") for part in ("bucket", "sum", "count"))
        for key in sorted(counts):
            values = key.split(_SEPARATOR)
            cumulative, points = 0, []
            for bound in BUCKETS + ("+Inf",):
                cumulative += int(buckets.get(_field(*values, bound), 0))
                points.append((str(bound), cumulative))
            histogram.add_metric(values, points, float(sums.get(key, 0)))
        return histogram


def render(queue_depths: dict) -> str:
    """Prometheus text exposition of everything recorded, plus the queue depths given."""
    from prometheus_client import CollectorRegistry, generate_latest

    flush()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RedisCollector(queues.redis(), queue_depths))
    return generate_latest(registry).decode()


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
