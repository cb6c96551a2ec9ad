"""Fairness across stores: how long another store's endpoint waits for each new event while 1, 4,
then 8 hostile stores, each with 16 endpoints that answer only after 9 s, have a replay queued to
them; beside the same run without them. Not a test: figures (docs/performance.md).

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/tender_bench_webhooks REDIS_URL=redis://127.0.0.1:6379/1 \\
        .venv/bin/python -m bench.webhook_fairness [--seconds 20] [--replayed-events 100] [--hostile-stores 1,4,8]

The Procfile's `webhooks` worker and `scheduler`, and a worker for the `maintenance` queue (whose
relay sweep starts delivery runs when no new event does), run as processes of their own on
PostgreSQL and Redis; the receivers run in this process. Each phase creates one invoice of the measured store
every 0.5 s for `--seconds` and takes, for each, the time from its commit to its arrival at the
measured store's endpoint. Hostile stores are added between phases (1, then 3 more, then 4 more:
each phase's hostile stores are still hanging on to their slots and their backlogs when it runs).
Goal: p99 <= 5 s at every count. Every process is stopped by its PID; each phase ends after
`--seconds` plus at most 20 s of waiting for the last arrivals.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import time

from bench import stack
from tests.support.receiver import Receiver

HOSTILE_ENDPOINTS = 16
HOSTILE_ANSWER_SECONDS = 9
EVERY = 0.5


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def measure(store, receiver: Receiver, seconds: int, label: str) -> dict:
    """One invoice of `store` every EVERY seconds; the seconds from each commit to its arrival."""
    from bench.webhooks import make_events
    from models.base import db
    from models.events import Event

    sent = {}
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        began = time.monotonic()
        [event_id] = make_events(store, 1)
        with db.connection_context():
            event = Event.get_by_id(event_id)
        sent[event.public_id] = began
        time.sleep(max(0.0, EVERY - (time.monotonic() - began)))
    deadline = time.monotonic() + 20
    while True:
        arrived = {}
        for request in receiver.to("/measured"):
            event_id = request.headers.get("X-Tender-Event-Id")
            if event_id in sent and event_id not in arrived:
                arrived[event_id] = request.at - sent[event_id]
        if len(arrived) == len(sent) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    # An event that never arrived counts as infinitely late.
    latencies = list(arrived.values()) + [float("inf")] * (len(sent) - len(arrived))
    figures = {"events": len(sent), "arrived": len(arrived),
               "p50": percentile(latencies, 0.50) if latencies else None,
               "p99": percentile(latencies, 0.99) if latencies else None,
               "max": max(latencies) if latencies else None}
    print(f"{label}: {figures['arrived']} of {figures['events']} events arrived; commit to arrival "
          f"p50 {figures['p50']:.2f} s, p99 {figures['p99']:.2f} s, max {figures['max']:.2f} s "
          f"(goal p99 <= 5 s); load {stack.load()}", flush=True)
    return figures


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--replayed-events", type=int, default=100)
    parser.add_argument("--hostile-stores", default="1,4,8")
    return parser.parse_args()


def add_hostile_store(number: int, receiver: Receiver, events: int, since: dt.datetime) -> int:
    """A store whose 16 endpoints answer after HOSTILE_ANSWER_SECONDS, and a replay of its `events`
    (created before its endpoints, so nothing was sent yet) to each: the deliveries replayed."""
    from bench.webhooks import make_events
    from core.clock import utcnow
    from models.base import db
    from models.events import Event
    from models.webhooks import WebhookEndpoint
    from services.accounts import stores
    from services.webhooks import endpoints, webhook_replays

    with db.connection_context():
        hostile = stores.create_store(name=f"hostile {number}", payout_wallet="hostile.near", now=utcnow())
    make_events(hostile, events)
    with db.connection_context():
        for endpoint in range(HOSTILE_ENDPOINTS):
            path = f"/hostile-{number}-{endpoint}"
            receiver.delay(path, HOSTILE_ANSWER_SECONDS)
            endpoints.create_endpoint(hostile, {"url": receiver.url(path), "events": ["*"]}, now=utcnow(),
                                      allow_private=True)
        deadline = time.monotonic() + 60
        while Event.select().where(Event.dispatched_at.is_null()).exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        return sum(webhook_replays.replay(hook, {"since": since}, now=utcnow()).events
                   for hook in WebhookEndpoint.select().where(WebhookEndpoint.store == hostile.id))


def start_worker(processes, url: str, redis_url: str) -> None:
    """The `webhooks` worker, and a worker for `maintenance` (the relay sweep, which starts delivery
    runs when no new event nudges one), and the scheduler."""
    environment = stack.env(url, REDIS_URL=redis_url, ALLOW_PRIVATE_WEBHOOK_URLS="1")
    for queue in ("webhooks", "maintenance"):
        processes.start(queue, [str(stack.BIN / "rq"), "worker", "--url", redis_url, "--worker-ttl", "5",
                                "--worker-class", "rq.worker.SimpleWorker", queue], environment)
    processes.start("scheduler", [str(stack.BIN / "rq"), "cron", "--url", redis_url, "scheduler/cron.py"],
                    environment)


def main():
    args = options()
    counts = [int(count) for count in args.hostile_stores.split(",") if count]
    url = stack.database_url("tender_bench_webhooks")
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/1"
    import redis

    redis.Redis.from_url(redis_url).flushdb()          # this benchmark's own Redis database
    from bench.webhooks import make_events, setup

    setup(url, REDIS_URL=redis_url)
    from core.clock import utcnow
    from models.base import db
    from services.accounts import stores
    from services.webhooks import endpoints, outbox

    processes = stack.Processes()
    began = utcnow() - dt.timedelta(seconds=1)
    figures = {}
    with Receiver() as measured_receiver, Receiver() as hostile_receiver:
        try:
            start_worker(processes, url, redis_url)
            with db.connection_context():
                measured = stores.create_store(name="measured", payout_wallet="measured.near", now=utcnow())
                endpoints.create_endpoint(measured, {"url": measured_receiver.url("/measured"), "events": ["*"]},
                                          now=utcnow(), allow_private=True)
            make_events(measured, 1)                     # the worker is up once this arrives
            measured_receiver.wait_for(1, path="/measured", timeout=60)
            figures[0] = measure(measured, measured_receiver, args.seconds, "without hostile stores")
            hostile = 0
            for count in counts:
                replayed = 0
                while hostile < count:
                    replayed += add_hostile_store(hostile, hostile_receiver, args.replayed_events, began)
                    hostile += 1
                outbox.nudge_delivery()
                hostile_receiver.wait_for(4 * count, timeout=60)      # their attempts hold slots now
                print(f"{count} hostile store(s): {HOSTILE_ENDPOINTS} endpoints each answering after "
                      f"{HOSTILE_ANSWER_SECONDS} s; {replayed} more deliveries replayed", flush=True)
                figures[count] = measure(measured, measured_receiver, args.seconds, f"with {count} hostile store(s)")
        finally:
            hostile_receiver.stopping.set()
            processes.stop_all()
    print("hostile stores | arrived | p50 | p99 | max")
    for count, figure in figures.items():
        print(f"{count} | {figure['arrived']} / {figure['events']} | {figure['p50']:.2f} s | {figure['p99']:.2f} s | "
              f"{figure['max']:.2f} s")


if __name__ == "__main__":
    main()
