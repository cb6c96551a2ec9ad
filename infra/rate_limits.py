"""Fixed one-minute windows in Redis, shared by every process (docs/api.md#rate-limits).

A bucket has a mode: `enforce` refuses past the limit, `observe` only counts (and logs the excess),
`off` does nothing. If Redis is unreachable the request goes on: limits fail open, and a warning
is logged at most once a minute.
"""
from __future__ import annotations

from dataclasses import dataclass
import logging
import time

import redis as redis_lib

from infra import queues

log = logging.getLogger("tender.rate_limits")
WINDOW_SECONDS = 60
MODES = ("enforce", "observe", "off")
_last_warning = {"at": 0.0}
clock = time.time      # the wall clock whose whole minutes are the windows; tests pin it inside one


@dataclass(frozen=True)
class Bucket:
    name: str       # "write", "read", "public_checkout_token", ...
    limit: int
    mode: str


@dataclass(frozen=True)
class Decision:
    bucket: Bucket
    count: int
    reset_seconds: int

    @property
    def remaining(self) -> int:
        return max(0, self.bucket.limit - self.count)

    @property
    def exceeded(self) -> bool:
        return self.count > self.bucket.limit

    @property
    def refused(self) -> bool:
        return self.exceeded and self.bucket.mode == "enforce"


def hit(bucket: Bucket, subject: str, *, now: float | None = None) -> Decision | None:
    """Count one request of `subject` (a key id, an IP, a token) in `bucket`'s current window.

    None when the bucket is off or Redis cannot be reached (fail open).
    """
    if bucket.mode == "off":
        return None
    now = clock() if now is None else now
    window = int(now // WINDOW_SECONDS)
    redis_key = f"tender:rl:{bucket.name}:{subject}:{window}"
    try:
        pipeline = queues.redis().pipeline()
        pipeline.incr(redis_key)
        pipeline.expire(redis_key, WINDOW_SECONDS + 5)
        count = pipeline.execute()[0]
    except (redis_lib.RedisError, OSError) as error:
        _warn_fail_open(error, now)
        return None
    decision = Decision(bucket, int(count), (window + 1) * WINDOW_SECONDS - int(now))
    if decision.exceeded:
        log.warning("rate limit %s exceeded by %s (%d/%d, mode %s)", bucket.name, subject, decision.count,
                    bucket.limit, bucket.mode)
    return decision


def _warn_fail_open(error: Exception, now: float) -> None:
    if now - _last_warning["at"] >= 60:
        _last_warning["at"] = now
        log.warning("rate limits are failing open: Redis is unreachable (%s)", error)


def tightest(decisions) -> Decision | None:
    """The decision the response headers should show: a refusal first, then the fewest remaining."""
    decisions = [d for d in decisions if d is not None]
    if not decisions:
        return None
    return min(decisions, key=lambda d: (not d.refused, d.remaining))
