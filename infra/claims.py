"""Claiming due rows for one worker at a time, with a lease: the same helper on PostgreSQL and SQLite.

A claim is a compare-and-set on a lease (`claimed_until`) that stamps a fresh `claim_token`; the
claimer then reads back the rows carrying its token. On PostgreSQL the candidate rows are also
selected `FOR UPDATE SKIP LOCKED`, so concurrent claimers take disjoint batches without waiting
on each other; SQLite has no row locks (and serialises writers), so the lease check alone holds.
A worker that dies mid-batch simply lets its lease run out: the rows become due again. A worker
that needs longer keeps its rows by pushing `claimed_until` out where its token still holds: a poll
batch renews its short lease every second while it runs (`keep_leased`, infra/heartbeats.py), so a
dead worker's rows are due again seconds after it died, and a slow batch keeps its rows.

Webhook deliveries are claimed by a rule of their own (services/webhooks/delivery_claim.py:
caps in flight, stores in turn): docs/architecture.md#two-claims-on-purpose.
"""
from __future__ import annotations

import datetime as dt
import secrets
import time

import peewee as pw

from infra import heartbeats
from infra.database import on_postgres
from models.base import db


def lease_until(now: dt.datetime, lease_seconds: int) -> dt.datetime:
    """When a lease taken (or renewed) at `now` runs out."""
    return now + dt.timedelta(seconds=lease_seconds)


def claim_due(model, due, *, order_by, now: dt.datetime, lease_seconds: int, limit: int,
              read=None, changes: dict | None = None) -> tuple[str, list]:
    """Lease up to `limit` rows of `model` matching `due`; returns (token, the claimed rows).

    `read(token)` is the query that reads the claimed rows back (by default the rows themselves);
    `changes` are written by the claim itself (a mail counts its attempt when claimed)."""
    token = secrets.token_hex(16)
    key = model._meta.primary_key
    free = model.claimed_until.is_null() | (model.claimed_until < now)
    candidates = model.select(key).where(due & free).order_by(*order_by).limit(limit)
    if on_postgres():
        candidates = candidates.for_update(skip_locked=True)
    with db.atomic():
        # `free` is repeated outside the subquery: it is what makes the UPDATE a compare-and-set
        # when a concurrent claimer committed between our read and our write.
        model.update(claim_token=token, claimed_until=lease_until(now, lease_seconds),
                     **(changes or {})).where(
            key.in_(candidates) & free).execute()
    rows = read(token) if read is not None else model.select().where(model.claim_token == token)
    return token, list(rows)


def keep_leased(model, token: str, *, claimed_at: dt.datetime, lease_seconds: int) -> heartbeats.Beating:
    """Renew the lease of the rows `token` still holds every heartbeat until `.stop()`. The lease is
    reckoned on the claimer's clock (`claimed_at` plus the time since), as the claim's own was."""
    started = time.monotonic()

    def beat() -> bool:
        now = claimed_at + dt.timedelta(seconds=time.monotonic() - started)
        return model.update(claimed_until=lease_until(now, lease_seconds)).where(model.claim_token == token).execute() > 0
    return heartbeats.keep_alive(beat)


def release(model, row_id, token: str, **changes) -> bool:
    """Give the row back (with `changes`), only if our lease on it is still the current one."""
    return model.update(claim_token=None, claimed_until=None, **changes).where(
        (model._meta.primary_key == row_id) & (model.claim_token == token)).execute() == 1


def release_each(model, token: str, field, values: dict) -> int:
    """Give many rows of one claim back in one UPDATE, `field` set to each row's own value
    ({primary key: value}); only the rows our lease still holds. Returns how many."""
    if not values:
        return 0
    key = model._meta.primary_key
    each = pw.Case(key, [(key.to_value(row_id), field.to_value(value)) for row_id, value in values.items()])
    return model.update({model.claim_token: None, model.claimed_until: None, field: each}).where(
        key.in_(list(values)) & (model.claim_token == token)).execute()
