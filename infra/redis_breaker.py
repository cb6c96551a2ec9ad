"""A circuit breaker for Redis (docs/operations.md#redis): a Redis that is down or stalls (accepts
connections, never answers) costs a request at most one short timeout per breaker interval.

Redis carries only nudges, counters and rate-limit windows (the database is the truth), so every
caller already fails open on a RedisError. What made a stalled Redis expensive was the wait
before that error: a 2 s connect timeout, a 5 s read timeout and redis-py's own retries, paid
by every call of every request. Here each socket operation is bounded by a short timeout, and
after one fails every call fails at once for `OPEN_SECONDS`; then calls go through again, and
the first that fails opens the breaker for another interval.
"""
from __future__ import annotations

import logging
import threading
import time

import redis as redis_lib
from redis.connection import Connection
from redis.sentinel import Sentinel, SentinelManagedConnection

log = logging.getLogger("tender.redis")

SOCKET_TIMEOUT_SECONDS = 0.25    # connect and each read/write: Redis answers in well under 1 ms
OPEN_SECONDS = 5.0
_FAILURES = (redis_lib.ConnectionError, redis_lib.TimeoutError, OSError)


class Breaker:
    def __init__(self, open_seconds: float = OPEN_SECONDS):
        self.open_seconds = open_seconds
        self._open_until = 0.0
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        return time.monotonic() < self._open_until

    def check(self) -> None:
        if self.is_open:
            raise redis_lib.ConnectionError("Redis circuit breaker open: a recent call failed or stalled")

    def trip(self, error: Exception) -> None:
        with self._lock:
            if not self.is_open:
                log.warning("Redis failed or stalled (%s); skipping Redis for %.0f s", error, self.open_seconds)
            self._open_until = time.monotonic() + self.open_seconds

    def close(self) -> None:
        self._open_until = 0.0


class BreakerMixin:
    """Over one of redis-py's connection classes: refuses at once while its client's breaker is open
    and trips it on a failed or timed-out connect, send or read. `client()` makes a subclass per
    client, carrying that client's breaker. Under Sentinel, `connect` includes asking the Sentinels
    where the master is, so a failover in progress also costs one short wait per breaker interval."""

    breaker: Breaker

    def connect(self):
        self.breaker.check()
        try:
            return super().connect()
        except _FAILURES as error:
            self.breaker.trip(error)
            raise

    def send_packed_command(self, command, check_health=True):
        self.breaker.check()
        try:
            return super().send_packed_command(command, check_health=check_health)
        except _FAILURES as error:
            self.breaker.trip(error)
            raise

    def read_response(self, *args, **kwargs):
        try:
            return super().read_response(*args, **kwargs)
        except _FAILURES as error:
            self.breaker.trip(error)
            raise


class BreakerConnection(BreakerMixin, Connection):
    """A plain TCP connection to the one Redis of REDIS_URL."""


class SentinelBreakerConnection(BreakerMixin, SentinelManagedConnection):
    """A connection to whichever server the Sentinels name master; redis-py's Sentinel connection
    turns a write refused by a demoted master (READONLY) into a ConnectionError, so it trips too."""


def client(target) -> redis_lib.Redis:
    """A Redis client with short timeouts, no retries and a breaker of its own, for `target`: a
    redis:// URL or a `config.RedisSentinel`."""
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    options = {"socket_connect_timeout": SOCKET_TIMEOUT_SECONDS, "socket_timeout": SOCKET_TIMEOUT_SECONDS,
               "retry": Retry(NoBackoff(), 0), "health_check_interval": 30}
    if isinstance(target, str):
        connection_class = type("BreakerConnection", (BreakerConnection,), {"breaker": Breaker()})
        return redis_lib.Redis.from_url(target, connection_class=connection_class, **options)
    connection_class = type("SentinelBreakerConnection", (SentinelBreakerConnection,), {"breaker": Breaker()})
    return sentinel_of(target, SOCKET_TIMEOUT_SECONDS).master_for(
        target.master, connection_class=connection_class, db=target.db, password=target.password, **options)


def sentinel_of(target, timeout: float) -> Sentinel:
    """redis-py's Sentinel for a `config.RedisSentinel`; each Sentinel is asked with `timeout`."""
    return Sentinel(list(target.sentinels), sentinel_kwargs={
        "socket_timeout": timeout, "socket_connect_timeout": timeout, "password": target.sentinel_password})


def breaker_of(redis_client) -> Breaker | None:
    """The breaker of a client `client()` made (None for others, e.g. the embedded fakeredis)."""
    return getattr(redis_client.connection_pool.connection_class, "breaker", None)
