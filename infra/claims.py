"""Claiming due rows for one worker at a time: the same helper on PostgreSQL and SQLite.

A claim is a compare-and-set on a lease (`claimed_until`) that stamps a fresh `claim_token`; the
claimer then reads back the rows carrying its token. On PostgreSQL the candidate rows are also
selected `FOR UPDATE SKIP LOCKED`, so concurrent claimers take disjoint batches without waiting
on each other; SQLite has no row locks (and serialises writers), so the lease check alone holds.
A worker that dies mid-batch simply lets its lease run out: the rows become due again.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass
import datetime as dt
import secrets

import peewee as pw
from peewee import fn

from core import ids
from infra.locks import write_transaction
from models.base import db, is_postgres
from models.webhooks import WebhookAttempt, WebhookDelivery


def claim_due(model, due, *, order_by, now: dt.datetime, lease_seconds: int, limit: int,
              read=None) -> tuple[str, list]:
    """Lease up to `limit` rows of `model` matching `due`; returns (token, the claimed rows).

    `read(token)` is the query that reads the claimed rows back (by default the rows themselves)."""
    token = secrets.token_hex(16)
    key = model._meta.primary_key
    free = model.claimed_until.is_null() | (model.claimed_until < now)
    candidates = model.select(key).where(due & free).order_by(*order_by).limit(limit)
    if is_postgres():
        candidates = candidates.for_update(skip_locked=True)
    with db.atomic():
        # `free` is repeated outside the subquery: it is what makes the UPDATE a compare-and-set
        # when a concurrent claimer committed between our read and our write.
        model.update(claim_token=token, claimed_until=now + dt.timedelta(seconds=lease_seconds)).where(
            key.in_(candidates) & free).execute()
    rows = read(token) if read is not None else model.select().where(model.claim_token == token)
    return token, list(rows)


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


# --- Webhook deliveries -------------------------------------------------------------------------
# A delivery's claim is written on the row itself: `claim_token`, `attempts + 1`, `last_attempt_at`,
# and `next_attempt_at` pushed out by the lease (a claimed row is "in flight" until that passes or
# its result clears the token). Claims are serialised (an advisory lock on PostgreSQL; SQLite's
# IMMEDIATE transaction already is), so the in-flight counts a claim reads cannot change under it.

_DELIVERY_CLAIM_LOCK = 0x7E4D_0013


@dataclass(frozen=True)
class DeliveryCaps:
    """What one claim may take: attempts in flight at once per target (an endpoint; a store's
    legacy callbacks count as one target) and per store, across every worker, and the lease."""
    per_target: int
    per_store: int
    lease_seconds: int


def claim_deliveries(token: str, caps: DeliveryCaps, *, now: dt.datetime, limit: int, among=None) -> int:
    """Claim up to `limit` due deliveries under `token` for their next attempt; returns how many.

    Stores take turns (each store's oldest due delivery first, then each one's second, …), and
    no target or store goes over its cap, so one store's backlog or slow endpoints never hold
    the slots another store's new events need (docs/webhooks.md#fairness). `among`: only these
    delivery ids (the ones a fan-out just created). A claimed row whose lease ran out belonged
    to a worker that died mid-attempt: that attempt is recorded as `interrupted`."""
    if limit <= 0 or (among is not None and not among):
        return 0
    with write_transaction():
        if is_postgres():
            db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (_DELIVERY_CLAIM_LOCK,))
        rows = _deliveries_within_caps(caps, now=now, limit=limit, among=among)
        if not rows:
            return 0
        (WebhookDelivery.update(claim_token=token, attempts=WebhookDelivery.attempts + 1, last_attempt_at=now,
                                next_attempt_at=now + dt.timedelta(seconds=caps.lease_seconds), updated_at=now)
         .where(WebhookDelivery.id.in_([row.id for row in rows])).execute())
        interrupted = [row for row in rows if row.claim_token is not None]
        if interrupted:
            WebhookAttempt.insert_many([
                dict(id=ids.new_uuid(), delivery=row.id, number=row.attempts, outcome="interrupted",
                     started_at=row.last_attempt_at or now, error="the worker stopped during this attempt")
                for row in interrupted]).execute()
    return len(rows)


def _deliveries_within_caps(caps: DeliveryCaps, *, now: dt.datetime, limit: int, among) -> list:
    Delivery = WebhookDelivery
    # Keys as the database's own text, so the same value round-trips through both drivers.
    target = fn.COALESCE(Delivery.endpoint, Delivery.store).cast("text")
    store = Delivery.store.cast("text")
    in_flight = ((Delivery.status == "pending") & Delivery.claim_token.is_null(False)
                 & (Delivery.next_attempt_at > now))
    per_target, per_store = collections.Counter(), collections.Counter()
    for store_key, target_key, count in (Delivery.select(store, target, fn.COUNT(Delivery.id))
                                         .where(in_flight).group_by(store, target).tuples()):
        per_target[target_key] += count
        per_store[store_key] += count
    due = (Delivery.status == "pending") & (Delivery.next_attempt_at <= now)
    if among is not None:
        due &= Delivery.id.in_(list(among))
    full_targets = [key for key, count in per_target.items() if count >= caps.per_target]
    full_stores = [key for key, count in per_store.items() if count >= caps.per_store]
    if full_targets:
        due &= target.not_in(full_targets)
    if full_stores:
        due &= store.not_in(full_stores)
    # Each target's oldest (at most its cap), then each store's oldest of those (at most its
    # cap), taken store by store in turn: every store's first, then every store's second, ….
    by_target = (Delivery.select(Delivery.id, Delivery.store, Delivery.next_attempt_at, fn.ROW_NUMBER().over(
                     partition_by=[target], order_by=[Delivery.next_attempt_at, Delivery.id]).alias("place"))
                 .where(due).alias("by_target"))
    by_store = (Delivery.select(by_target.c.id, fn.ROW_NUMBER().over(
                    partition_by=[by_target.c.store_id],
                    order_by=[by_target.c.next_attempt_at, by_target.c.id]).alias("turn"))
                .from_(by_target).where(by_target.c.place <= caps.per_target).alias("by_store"))
    query = (Delivery.select(Delivery.id, Delivery.claim_token, Delivery.attempts, Delivery.last_attempt_at,
                             target.alias("target"), store.alias("store_key"))
             .join(by_store, on=(Delivery.id == by_store.c.id))
             .where(by_store.c.turn <= caps.per_store)
             .order_by(by_store.c.turn, Delivery.next_attempt_at)
             .limit(limit + caps.per_target + caps.per_store))
    if is_postgres():
        query = query.for_update(of=Delivery, skip_locked=True)
    rows = []
    for row in query:
        if per_target[row.target] < caps.per_target and per_store[row.store_key] < caps.per_store:
            per_target[row.target] += 1
            per_store[row.store_key] += 1
            rows.append(row)
            if len(rows) == limit:
                break
    return rows
