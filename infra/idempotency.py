"""`Idempotency-Key` (docs/retries.md, docs/api.md#idempotency): a retried request answers what the first one
answered. One implementation for every route that creates or changes something.

A key is claimed by inserting its row (status `in_progress`) in a transaction of its own; the
unique (store, scope, key) constraint lets exactly one of any number of concurrent requests, in any
process, win that insert. The winner does the work and stores the response in the same
transaction as the work itself, so the work never exists without its stored response.

A request lost with its host (SIGKILL, a machine cut off) cannot release its claim, so the claim
lapses instead: the running request renews `locked_at` every second (infra/heartbeats.py), and a
retry takes over a claim whose renewals stopped ABANDONED_AFTER ago. The holder's last `locked_at`
is its fencing token: the response is stored only if the claim still carries it, in the work's own
transaction, so a request whose claim was taken over has its work rolled back and the request
runs exactly once whoever finishes it. On SQLite nothing renews the claim (the request's own
transaction holds the database's one write lock, which a renewal would wait for); a retry's take-over
waits behind that same lock, then finds the request complete.

A response field that carries a secret shown once (a webhook signing secret) is never stored: the
stored body holds its SHA-256 instead, and a replay asks `shown_again` for the secret itself from
where it is kept (the endpoint's row), which must still have that digest (docs/decisions.md).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
import hashlib
import json
import re
from typing import Callable

import peewee as pw

from core import ids
from core.clock import utcnow
from core.errors import BadRequest, Conflict
from infra import heartbeats
from infra.locks import write_transaction
from models.base import db
from models.payment_links import IdempotencyKey
from models.stores import Store

RETENTION = dt.timedelta(hours=24)
# A claim not renewed for this long belongs to a request that died (crash, lost host): a retry may
# take it over. Five heartbeats: a living request on a loaded machine is not taken for dead.
ABANDONED_AFTER = dt.timedelta(seconds=5)
REDACTED_PREFIX = "sha256:"       # a stored secret field: its digest, never the secret
_KEY_PATTERN = re.compile(r"^[\x20-\x7e]{1,255}$")


@dataclass(frozen=True)
class Outcome:
    status: int
    body: dict
    replayed: bool


def check_key(key: str) -> str:
    if not _KEY_PATTERN.match(key):
        raise BadRequest("validation_error", "Idempotency-Key: must be 1 to 255 printable ASCII characters",
                          param="Idempotency-Key")
    return key


def fingerprint(route: str, body: dict) -> str:
    """SHA-256 of the route and the body as canonical JSON: key order and spacing do not matter."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(f"{route}\n{canonical}".encode("utf-8")).hexdigest()


def run(store: Store, key: str, request_fingerprint: str, work: Callable[[], tuple[int, dict]], *,
        now: dt.datetime, scope: str = "", secret_field: str | None = None,
        shown_again: Callable[[dict, str], str] | None = None) -> Outcome:
    """Run `work` once per (store, scope, key); replay its stored response for a repeat of the request.

    `work` runs inside the transaction that completes the claim. If it raises, the claim is
    released, so nothing is remembered about a request that changed nothing. `secret_field` names
    a field of the body stored only as a digest; on a replay `shown_again(body, digest)` returns the
    secret to answer with (or raises)."""
    claim = _claim(store, key, request_fingerprint, scope=scope, now=now)
    if isinstance(claim, Outcome):
        return _with_secret_shown_again(claim, secret_field, shown_again)
    held = _Held(claim.id, claim.locked_at)
    beating = heartbeats.keep_alive(held.beat)
    try:
        with write_transaction():
            status, body = work()
            beating.stop()
            # Stored as text in the response's own key order, so a replay is the same bytes.
            stored = IdempotencyKey.update(status="complete", response_status=status,
                                           response_body=json.dumps(_redacted(body, secret_field), separators=(",", ":"))
                                           ).where(held.still_ours()).execute()
            if not stored:
                raise Conflict("idempotency_key_in_use", "This request's Idempotency-Key claim lapsed and a retry "
                               "took it over; the retry's answer is the one kept.", param="Idempotency-Key")
    except BaseException:
        beating.stop()
        IdempotencyKey.delete().where(held.still_ours()).execute()
        raise
    return Outcome(status, body, replayed=False)


class _Held:
    """A running request's claim, fenced by the `locked_at` it last wrote."""

    def __init__(self, claim_id, locked_at: dt.datetime):
        self.claim_id, self.locked_at = claim_id, locked_at

    def still_ours(self):
        return ((IdempotencyKey.id == self.claim_id) & (IdempotencyKey.status == "in_progress")
                & (IdempotencyKey.locked_at == self.locked_at))

    def beat(self) -> bool:
        renewed_at = utcnow()
        if not IdempotencyKey.update(locked_at=renewed_at).where(self.still_ours()).execute():
            return False
        self.locked_at = renewed_at
        return True


def secret_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _redacted(body: dict, secret_field: str | None) -> dict:
    if secret_field is None or not isinstance(body.get(secret_field), str):
        return body
    return {**body, secret_field: REDACTED_PREFIX + secret_digest(body[secret_field])}


def _with_secret_shown_again(outcome: Outcome, secret_field: str | None, shown_again) -> Outcome:
    stored = outcome.body.get(secret_field) if secret_field else None
    if not (isinstance(stored, str) and stored.startswith(REDACTED_PREFIX)):
        return outcome
    secret = shown_again(outcome.body, stored[len(REDACTED_PREFIX):])
    return Outcome(outcome.status, {**outcome.body, secret_field: secret}, replayed=True)


def _claim(store: Store, key: str, request_fingerprint: str, *, scope: str, now: dt.datetime):
    """The new claim row, or the Outcome to answer with; raises for reuse and in-progress keys."""
    for _ in range(3):   # a lost race against an expiring or abandoned row is retried, briefly
        try:
            with db.atomic():
                return IdempotencyKey.create(
                    id=ids.new_uuid(), store=store.id, scope=scope, key=key, fingerprint=request_fingerprint,
                    status="in_progress", locked_at=now, created_at=now, expires_at=now + RETENTION)
        except pw.IntegrityError:
            pass
        existing = IdempotencyKey.get_or_none((IdempotencyKey.store == store.id) & (IdempotencyKey.scope == scope)
                                              & (IdempotencyKey.key == key))
        if existing is None:
            continue   # deleted (released or purged) since our insert failed
        if existing.expires_at <= now:
            IdempotencyKey.delete().where((IdempotencyKey.id == existing.id)
                                          & (IdempotencyKey.expires_at <= now)).execute()
            continue
        if existing.fingerprint != request_fingerprint:
            raise BadRequest("idempotency_key_reused", "This Idempotency-Key was used with a different "
                             "request in the last 24 hours; use a new key for a new request.",
                              param="Idempotency-Key")
        if existing.status == "complete":
            return Outcome(existing.response_status, json.loads(existing.response_body), replayed=True)
        if existing.locked_at <= now - ABANDONED_AFTER:
            taken = IdempotencyKey.update(locked_at=now).where(
                (IdempotencyKey.id == existing.id) & (IdempotencyKey.status == "in_progress")
                & (IdempotencyKey.locked_at == existing.locked_at)).execute()
            if taken:
                return IdempotencyKey.get_by_id(existing.id)
            continue
        raise Conflict("idempotency_key_in_use", "A request with this Idempotency-Key is still being "
                       "processed; retry after it finishes to get its response.", param="Idempotency-Key")
    raise Conflict("idempotency_key_in_use", "This Idempotency-Key is busy; retry shortly.",
                      param="Idempotency-Key")


def purge_expired(*, now: dt.datetime, batch: int = 1000) -> int:
    """Delete up to `batch` keys past their 24 hours (a maintenance sweep may call this)."""
    doomed = IdempotencyKey.select(IdempotencyKey.id).where(IdempotencyKey.expires_at <= now).limit(batch)
    return IdempotencyKey.delete().where(IdempotencyKey.id.in_(doomed)).execute()
