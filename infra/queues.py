"""The Redis connection and RQ queues (docs/operations.md). With neither REDIS_URL nor REDIS_SENTINELS,
an in-process fakeredis."""
from __future__ import annotations

import redis as redis_lib

from infra import redis_breaker

QUEUE_NAMES = ("webhooks", "chain", "settlement", "maintenance", "mail")
_state = {"redis": None}


def connect(target) -> redis_lib.Redis:
    """`target` is `Settings.redis`: a redis:// URL, a `config.RedisSentinel`, or None (embedded)."""
    if target is None:
        import fakeredis

        # One server per process: the web process's embedded worker threads share it.
        connection = fakeredis.FakeStrictRedis(server=fakeredis.FakeServer())
    else:
        connection = redis_breaker.client(target)      # short timeouts and a circuit breaker
    _state["redis"] = connection
    return connection


def redis() -> redis_lib.Redis:
    if _state["redis"] is None:
        raise RuntimeError("queues.connect() has not been called (bootstrap.init_runtime does it)")
    return _state["redis"]


def queue(name: str):
    """The RQ queue `name`, with the serializer every Tender process shares.

    RQ's default (pickle), because `rq cron` in RQ 3.0 always enqueues with it, whatever
    `--serializer` says; jobs take ids and primitives only, so nothing depends on the format.
    """
    from rq import Queue

    return Queue(name, connection=redis())
