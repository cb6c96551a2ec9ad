"""The worker class of the Procfile's `worker` and `webhooks` processes (`rq worker --worker-class
infra.rq_worker.Worker`): rq's SimpleWorker (each job in the worker process itself, no fork), made to
outlive a Redis failover (docs/operations.md#redis-behind-sentinel).

* While it cannot reach Redis it tries again every second. rq's own worker waits twice as long
  after each failed try, up to a minute, so a worker that missed the first seconds of a failover
  could sit out most of a minute after the new primary was ready.
* rq's loop quits on any error outside its dequeue, and a job that ends while the primary is down
  fails in rq's own bookkeeping after it (measured in `make cluster-check`: a `webhooks` worker
  quit that way, and deliveries waited for its host's next restart). This worker starts its loop
  again a second later, under a new name (the old one may still be registered on the new primary),
  instead of ending the process. The job's database work is done; what rq failed to record is only
  Redis state, and the sweeps redo what is due. It gives up, ending the process for the platform to
  see, after MAX_RESTARTS restarts within WINDOW_SECONDS.
"""
from __future__ import annotations

import time
from uuid import uuid4

from rq.worker import SimpleWorker

MAX_RESTARTS = 30
WINDOW_SECONDS = 600
PAUSE_SECONDS = 1.0


class Worker(SimpleWorker):
    exponential_backoff_factor = 1.0
    max_connection_wait_time = 1.0

    def work(self, burst: bool = False, *args, **kwargs) -> bool:
        restarts: list[float] = []
        while True:
            try:
                worked = super().work(burst, *args, **kwargs)
            except Exception as error:          # rq's teardown after its loop quit, with Redis still away
                self.log.error("Worker %s: %s", self.name, error)
                worked = False
            if burst or self._stop_requested or kwargs.get("max_jobs") or kwargs.get("max_idle_time"):
                return worked               # it was asked to end: not a failure
            now = time.monotonic()
            restarts = [when for when in restarts if now - when < WINDOW_SECONDS] + [now]
            if len(restarts) > MAX_RESTARTS:
                self.log.error("Worker %s: quit %d times in %d s; giving up", self.name, len(restarts), WINDOW_SECONDS)
                return worked
            self.log.warning("Worker %s: its loop quit (Redis lost?); starting it again in %.0f s", self.name,
                             PAUSE_SECONDS)
            time.sleep(PAUSE_SECONDS)
            self.name = uuid4().hex
