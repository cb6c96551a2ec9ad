"""Claiming due rows for one worker at a time: the same helper on PostgreSQL and SQLite.

A claim is a compare-and-set on a lease (`claimed_until`) that stamps a fresh `claim_token`; the
claimer then reads back the rows carrying its token. On PostgreSQL the candidate rows are also
selected `FOR UPDATE SKIP LOCKED`, so concurrent claimers take disjoint batches without waiting
on each other; SQLite has no row locks (and serialises writers), so the lease check alone holds.
A worker that dies mid-batch simply lets its lease run out: the rows become due again.
"""
from __future__ import annotations

import datetime as dt
import secrets

from models.base import db, is_postgres


def claim_due(model, due, *, order_by, now: dt.datetime, lease_seconds: int, limit: int) -> tuple[str, list]:
    """Lease up to `limit` rows of `model` matching `due`; returns (token, the claimed rows)."""
    token = secrets.token_hex(16)
    free = model.claimed_until.is_null() | (model.claimed_until < now)
    candidates = model.select(model.id).where(due & free).order_by(*order_by).limit(limit)
    if is_postgres():
        candidates = candidates.for_update(skip_locked=True)
    with db.atomic():
        # `free` is repeated outside the subquery: it is what makes the UPDATE a compare-and-set
        # when a concurrent claimer committed between our read and our write.
        model.update(claim_token=token, claimed_until=now + dt.timedelta(seconds=lease_seconds)).where(
            model.id.in_(candidates) & free).execute()
    return token, list(model.select().where(model.claim_token == token))


def release(model, row_id, token: str, **changes) -> bool:
    """Give the row back (with `changes`), only if our lease on it is still the current one."""
    return model.update(claim_token=None, claimed_until=None, **changes).where(
        (model.id == row_id) & (model.claim_token == token)).execute() == 1
