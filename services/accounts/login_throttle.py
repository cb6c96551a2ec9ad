"""Login throttling (docs/dashboard.md#signing-in): at most 10 failed sign-ins per account and per
client address in 15 minutes, counted in Redis so that every web process sees them."""
from __future__ import annotations

import hashlib

from infra import queues

LIMIT = 10
WINDOW_SECONDS = 15 * 60
_PREFIX = "tender:dashboard:login_failures:"


def _keys(email: str, address: str) -> tuple[str, str]:
    account = hashlib.sha256(email.strip().lower().encode()).hexdigest()      # no address book in Redis
    return _PREFIX + "account:" + account, _PREFIX + "client:" + (address or "unknown")


def is_locked(email: str, address: str) -> bool:
    counts = queues.redis().mget(_keys(email, address))
    return any(int(count or 0) >= LIMIT for count in counts)


def note_failure(email: str, address: str) -> None:
    pipe = queues.redis().pipeline()
    for key in _keys(email, address):
        pipe.incr(key)
        pipe.expire(key, WINDOW_SECONDS, nx=True)
    pipe.execute()


def forget_account(email: str) -> None:
    """A successful sign-in or a password reset clears the account's count (not the client's)."""
    queues.redis().delete(_keys(email, "")[0])
