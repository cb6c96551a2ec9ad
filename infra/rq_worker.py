"""The worker class of the Procfile's `worker` and `webhooks` processes (`rq worker --worker-class
infra.rq_worker.Worker`): rq's SimpleWorker (each job in the worker process itself, no fork), except
that while it cannot reach Redis it tries again every second. rq's own worker waits twice as long
after each failed try, up to a minute, so a worker that missed the first seconds of a Sentinel
failover could sit out most of a minute after the new primary was ready (docs/operations.md#redis-behind-sentinel).
"""
from rq.worker import SimpleWorker


class Worker(SimpleWorker):
    exponential_backoff_factor = 1.0
    max_connection_wait_time = 1.0
