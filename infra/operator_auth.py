"""The operator's credentials (GET /metrics and rq-dashboard, docs/operations.md): compared in
constant time, and guessed at most FAILURES_PER_MINUTE times a minute per client (an IPv4 address
or an IPv6 /64) and FAILURES_PER_ACCOUNT_PER_MINUTE times a minute in all.

Past either, the client (or everyone) is refused (429 and `Retry-After`) for the rest of the minute
whatever it sends, the right credentials included: were a right guess let through, a locked-out
client could go on guessing and tell the right one by its 200. The count for the account holds
whoever the client seems to be: a client address can be many (a /64, a botnet, or X-Forwarded-For
values made up by a client that reaches the app around the proxy TRUSTED_PROXY_HOPS trusts), the
account is one. Only requests that carry credentials count, so a browser's first, bare request is
no failure. Like the other limits, this one fails open when Redis cannot be reached (a warning is
logged).
"""
from __future__ import annotations

from dataclasses import dataclass
import hmac
import logging

import redis as redis_lib

from core.client_addresses import client_of
from infra import queues, rate_limits

log = logging.getLogger("tender.operator_auth")
FAILURES_PER_MINUTE = 10
FAILURES_PER_ACCOUNT_PER_MINUTE = 30
_FAILURES = rate_limits.Bucket("operator_auth_failures", FAILURES_PER_MINUTE, "enforce")
_ACCOUNT_FAILURES = rate_limits.Bucket("operator_auth_account_failures", FAILURES_PER_ACCOUNT_PER_MINUTE, "enforce")
ACCOUNT = "operator"        # the one account these credentials open


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    retry_after: int | None = None      # set: refused for too many failures (429); else 401


def _lockout_key(client: str) -> str:
    return f"tender:operator_lockout:{client}"


def credentials_match(username: str | None, password: str | None, *, expected_username: str,
                      expected_password: str) -> bool:
    # `&`, not `and`: both comparisons always run, so timing does not tell which one failed.
    return (hmac.compare_digest((username or "").encode(), expected_username.encode())
            & hmac.compare_digest((password or "").encode(), expected_password.encode()))


def verify(authorization, *, client: str, expected_username: str, expected_password: str) -> Verdict:
    """May `client` (its IP address) in with this `Authorization` (werkzeug's parsed header, or None)?"""
    client = client_of(client)
    waiting = max(_locked_for(client), _locked_for(ACCOUNT))
    if waiting:
        return Verdict(False, waiting)
    if authorization is None or authorization.type != "basic":
        return Verdict(False)
    if credentials_match(authorization.username, authorization.password, expected_username=expected_username,
                         expected_password=expected_password):
        return Verdict(True)
    for bucket, subject in ((_FAILURES, client), (_ACCOUNT_FAILURES, ACCOUNT)):
        decision = rate_limits.hit(bucket, subject)
        if decision is not None and decision.exceeded:
            _lock(subject, decision.reset_seconds)
            log.warning("operator credentials: %s failed %d times this minute; refused for %d s",
                        subject, decision.count, decision.reset_seconds)
            return Verdict(False, decision.reset_seconds)
    return Verdict(False)


def _locked_for(client: str) -> int:
    try:
        return max(0, queues.redis().ttl(_lockout_key(client)))
    except (redis_lib.RedisError, OSError) as error:
        log.warning("operator credential limit failing open: Redis is unreachable (%s)", error)
        return 0


def _lock(client: str, seconds: int) -> None:
    try:
        queues.redis().set(_lockout_key(client), 1, ex=max(1, seconds))
    except (redis_lib.RedisError, OSError) as error:
        log.warning("operator credential limit failing open: Redis is unreachable (%s)", error)
