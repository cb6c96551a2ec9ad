"""The embedded default (no REDIS_URL): the web process runs a worker and the scheduler in
background threads on its in-process fakeredis, so `make run` shows the whole payment flow.

Started by create_app (app.py) when Redis is embedded and EMBEDDED_JOBS is on; tests call
`start()` themselves. Production runs `rq worker` and `rq cron` as their own processes instead.
"""
from __future__ import annotations

import logging
import threading

from rq import SimpleWorker
from rq.cron import CronScheduler
from rq.timeouts import TimerDeathPenalty

from infra import queues
from jobs import use_runtime

log = logging.getLogger("tender.embedded")


class ThreadWorker(SimpleWorker):
    """A SimpleWorker that can live in a non-main thread: no signal handlers, timer timeouts, and
    no pub/sub command channel.

    rq's worker subscribes to its commands (stop a job, shut down: `rq` sends them to worker
    processes) on every `work()` call, on a pub/sub thread of its own that it waits for only a
    second when the call ends. Called again and again in one process (every tick here, every
    loop of a test's worker), those threads outlived their workers on a busy machine (3 of 11
    calls under load) and kept reading and reconnecting a pooled connection that the next
    worker's pub/sub had taken: redis-py then walks one pub/sub's channels on one thread while
    another changes them, and a test's worker once died of "dictionary changed size during
    iteration"."""

    death_penalty_class = TimerDeathPenalty

    def _install_signal_handlers(self):
        pass

    def subscribe(self):
        pass

    def unsubscribe(self):
        pass


class EmbeddedJobs:
    def __init__(self, settings, *, tick_seconds: float = 0.5):
        self.settings = settings
        self.tick_seconds = tick_seconds
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []

    def start(self) -> "EmbeddedJobs":
        use_runtime(self.settings, quiet_successes=True)
        if self.settings.log_level != "DEBUG":      # rq says "Enqueued job …" at INFO for every tick
            logging.getLogger("rq").setLevel(logging.WARNING)
        for name, target in (("tender-embedded-worker", self._work), ("tender-embedded-cron", self._schedule)):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self.threads.append(thread)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout)

    def _work(self) -> None:
        connection = queues.redis()
        worker_queues = [queues.queue(name) for name in queues.QUEUE_NAMES]
        while not self.stopping.is_set():
            try:
                worker = ThreadWorker(worker_queues, connection=connection)
                worker.work(burst=True, logging_level="WARNING")
            except Exception:  # the loop must outlive one bad tick; the job's failure is in RQ
                log.exception("embedded worker tick failed")
            self.stopping.wait(self.tick_seconds)

    def _schedule(self) -> None:
        from scheduler.schedule import sweeps

        scheduler = CronScheduler(connection=queues.redis(), logging_level="WARNING")
        for sweep in sweeps(self.settings):
            scheduler.register(**sweep)
        while not self.stopping.is_set():
            try:
                scheduler.enqueue_jobs()
            except Exception:
                log.exception("embedded scheduler tick failed")
            self.stopping.wait(min(self.tick_seconds, max(scheduler.calculate_sleep_interval(), 0.05)))


def start(settings, **kwargs) -> EmbeddedJobs:
    return EmbeddedJobs(settings, **kwargs).start()
