"""Claiming due rows for one worker at a time: the same helper on PostgreSQL and SQLite.

A claim is a compare-and-set on a lease (`claimed_until`) that stamps a fresh `claim_token`; the
claimer then reads back the rows carrying its token. On PostgreSQL the candidate rows are also
selected `FOR UPDATE SKIP LOCKED`, so concurrent claimers take disjoint batches without waiting
on each other; SQLite has no row locks (and serialises writers), so the lease check alone holds.
A worker that dies mid-batch simply lets its lease run out: the rows become due again.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import datetime as dt
import json
import secrets

import peewee as pw

from core import ids
from infra.locks import write_transaction
from models.base import db, is_postgres
from models.events import Event
from models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint


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


QUICK_ATTEMPT = dt.timedelta(seconds=1)


@dataclass(frozen=True)
class DeliveryCaps:
    """What one claim may take: attempts in flight at once per target (an endpoint; a store's
    legacy callbacks count as one target) and per store, across every worker, and the lease.
    `per_store_alone`: a store's cap while no other store has a delivery due and none of its
    attempts in flight has lasted QUICK_ATTEMPT (a backlog then uses the slots nobody else wants,
    and is back to `per_store` as soon as anyone else's delivery is due or its receivers slow)."""
    per_target: int
    per_store: int
    lease_seconds: int
    per_store_alone: int | None = None


@dataclass(frozen=True)
class Claimed:
    taken: int
    # Due deliveries were left behind: the limit was reached, or a target or store the claim took
    # from had more than its cap let it take. (A claim that took nothing says False.)
    more_due: bool
    # What each claimed delivery's attempt needs (`_ATTEMPT_NEEDS`), read in the claim itself.
    rows: list = field(default_factory=list, compare=False)


def claim_deliveries(token: str, caps: DeliveryCaps, *, now: dt.datetime, limit: int, among=None) -> Claimed:
    """Claim up to `limit` due deliveries under `token` for their next attempt; returns how many,
    and whether due ones were left (so a run knows to claim again as its attempts finish).

    Stores take turns (each store's oldest due delivery first, then each one's second, …), and
    no target or store goes over its cap, so one store's backlog or slow endpoints never hold
    the slots another store's new events need (docs/webhooks.md#fairness). `among`: only these
    delivery ids (the ones a fan-out just created). A claimed row whose lease ran out belonged
    to a worker that died mid-attempt: that attempt is recorded as `interrupted`."""
    with write_transaction():
        return claim_deliveries_in_transaction(token, caps, now=now, limit=limit, among=among)


def claim_deliveries_in_transaction(token: str, caps: DeliveryCaps, *, now: dt.datetime, limit: int,
                                    among=None) -> Claimed:
    """`claim_deliveries` inside the caller's write transaction (infra/locks.write_transaction),
    so a run writes its finished attempts' results and claims their successors in one."""
    if among is not None and not among:
        return Claimed(0, False)
    if limit <= 0:
        return Claimed(0, True)     # no room to look: more may be due
    at = WebhookDelivery.next_attempt_at.db_value
    values = dict(token=token, now=at(now), limit=limit, lease_end=at(now + dt.timedelta(seconds=caps.lease_seconds)),
                  quick_since=at(now - QUICK_ATTEMPT), per_target=caps.per_target, per_store=caps.per_store,
                  per_store_alone=max(caps.per_store, caps.per_store_alone or 0), rank_all_up_to=RANK_ALL_UP_TO)
    if among is not None:
        values["among"] = [WebhookDelivery.id.db_value(delivery_id) for delivery_id in among]
    if is_postgres():
        rows = _claim_within_caps_postgres(values)
    else:
        rows = _claim_within_caps_sqlite(values)
    rows = [_converted(row) for row in rows]
    interrupted = [row for row in rows if row["previous_token"] is not None]
    if interrupted:
        WebhookAttempt.insert_many([
            dict(id=ids.new_uuid(), delivery=row["id"], number=row["previous_attempts"], outcome="interrupted",
                 error="the worker stopped during this attempt", started_at=row["previous_start"] or now)
            for row in interrupted]).execute()
    more_due = len(rows) == limit or any(row["left_behind"] for row in rows)
    return Claimed(len(rows), more_due, rows)


# The claim's selection, one text for both databases (`{name}` is a parameter): what each target
# (an endpoint; a store's legacy callbacks count as one) and each store holds in flight right now,
# then each target's oldest due deliveries up to its room, then each store's oldest of those up to
# its room, taken store by store in turn (every store's first, then every store's second, …).
# A store's room is `per_store_alone` when it is the only store with deliveries due and all its
# attempts in flight started since `quick_since`. `left_behind`: the caps left due deliveries of
# that target or store for a later claim. `{candidates}` defines what the claim chooses among
# (`candidates`: id, store_id, next_attempt_at, target): below. The rows chosen are locked
# SKIP LOCKED (a row another transaction is writing, such as a late result of a lapsed claim, is
# left for a later claim rather than waited for; `{lock}` is empty on SQLite, which has one writer).
_CHOSEN = """
WITH RECURSIVE in_flight AS (
    SELECT store_id, COALESCE(endpoint_id, store_id) AS target, COUNT(*) AS held,
           MIN(last_attempt_at) AS oldest_start
    FROM webhook_delivery
    WHERE status = 'pending' AND claim_token IS NOT NULL AND next_attempt_at > {now}
    GROUP BY store_id, COALESCE(endpoint_id, store_id)
), target_held AS (
    SELECT target, SUM(held) AS held FROM in_flight GROUP BY target
), store_held AS (
    SELECT store_id, SUM(held) AS held, MIN(oldest_start) AS oldest_start FROM in_flight GROUP BY store_id
), {candidates}, by_target AS (
    SELECT c.id, c.store_id, c.next_attempt_at,
           ROW_NUMBER() OVER (PARTITION BY c.target ORDER BY c.next_attempt_at, c.id) AS place,
           COUNT(*) OVER (PARTITION BY c.target) AS target_due,
           {per_target} - COALESCE(t.held, 0) AS target_room
    FROM candidates c LEFT JOIN target_held t ON t.target = c.target
), stores_due AS (
    SELECT COUNT(DISTINCT store_id) AS stores FROM by_target
), by_store AS (
    SELECT b.id, b.next_attempt_at, b.target_due > b.target_room AS target_left,
           ROW_NUMBER() OVER (PARTITION BY b.store_id ORDER BY b.next_attempt_at, b.id) AS turn,
           COUNT(*) OVER (PARTITION BY b.store_id) AS store_due,
           CASE WHEN n.stores = 1 AND (s.oldest_start IS NULL OR s.oldest_start >= {quick_since})
                THEN {per_store_alone} ELSE {per_store} END - COALESCE(s.held, 0) AS store_room
    FROM by_target b LEFT JOIN store_held s ON s.store_id = b.store_id CROSS JOIN stores_due n
    WHERE b.place <= b.target_room
), chosen AS (
    SELECT d.id, d.claim_token AS previous_token, d.attempts AS previous_attempts,
           d.last_attempt_at AS previous_start, (c.target_left OR c.store_due > c.store_room) AS left_behind
    FROM (SELECT * FROM by_store WHERE turn <= store_room ORDER BY turn, next_attempt_at, id LIMIT {limit}) AS c
    JOIN webhook_delivery d ON d.id = c.id
    {lock}
)
"""

# What a claim chooses among. A fan-out's claim: the deliveries it just created (`{among}`: that
# test). Any other: every due delivery while there are at most RANK_ALL_UP_TO (a `LIMIT`ed count
# says which), else each target's oldest `per_target + 1` (one more than it could take, so the
# claim knows when some are left), read target by target through the index
# webhook_delivery_target_due. Ranking every due delivery costs in proportion to them (218 ms with
# 50,000 due, and claims take turns); walking the targets costs in proportion to the targets with
# any pending delivery, due or not (~7 µs each: 44 ms beside 5,000 failing receivers' retries).
# Only one branch runs: the other's condition is false before any row is read. Each
# database needs its own form of "a target's oldest few": PostgreSQL a LATERAL subquery (it would
# run a correlated IN once per row), SQLite a correlated IN (it has no LATERAL).
RANK_ALL_UP_TO = 200         # walking was already the quicker at 500 due (docs/performance.md)
_DUE = """SELECT d.id, d.store_id, d.next_attempt_at, COALESCE(d.endpoint_id, d.store_id) AS target
    FROM webhook_delivery d WHERE d.status = 'pending' AND d.next_attempt_at <= {now}"""
_AMONG = "candidates AS (" + _DUE + " AND {among})"
_DUE_CANDIDATES = """due_count AS (
    SELECT COUNT(*) AS due FROM (SELECT 1 FROM webhook_delivery WHERE status = 'pending' AND next_attempt_at <= {now}
                                 LIMIT {rank_all_up_to} + 1) AS sample
), targets(target) AS (
    SELECT * FROM (SELECT COALESCE(endpoint_id, store_id) FROM webhook_delivery WHERE status = 'pending'
                   ORDER BY COALESCE(endpoint_id, store_id) LIMIT 1) AS first_target
    WHERE (SELECT due FROM due_count) > {rank_all_up_to}
    UNION ALL
    SELECT (SELECT COALESCE(p.endpoint_id, p.store_id) FROM webhook_delivery p
            WHERE p.status = 'pending' AND COALESCE(p.endpoint_id, p.store_id) > t.target
            ORDER BY COALESCE(p.endpoint_id, p.store_id) LIMIT 1)
    FROM targets t WHERE t.target IS NOT NULL
), candidates AS (
    """ + _DUE + """ AND (SELECT due FROM due_count) <= {rank_all_up_to}
    UNION ALL
    {each_target}
)"""
_OLDEST_DUE_OF_TARGET = """SELECT {columns} FROM webhook_delivery x
        WHERE x.status = 'pending' AND COALESCE(x.endpoint_id, x.store_id) = t.target AND x.next_attempt_at <= {now}
        ORDER BY x.next_attempt_at, x.id LIMIT {per_target} + 1"""
_DUE_CANDIDATES_POSTGRES = _DUE_CANDIDATES.replace("{each_target}", """SELECT d.id, d.store_id, d.next_attempt_at, t.target
    FROM targets t CROSS JOIN LATERAL (""" + _OLDEST_DUE_OF_TARGET.replace(
    "{columns}", "x.id, x.store_id, x.next_attempt_at") + """) d
    WHERE t.target IS NOT NULL""")
_DUE_CANDIDATES_SQLITE = _DUE_CANDIDATES.replace("{each_target}", """SELECT d.id, d.store_id, d.next_attempt_at, t.target
    FROM targets t CROSS JOIN webhook_delivery d
    WHERE t.target IS NOT NULL AND d.id IN (""" + _OLDEST_DUE_OF_TARGET.replace("{columns}", "x.id") + ")")
_CLAIM = """UPDATE webhook_delivery SET claim_token = {token}, attempts = webhook_delivery.attempts + 1, last_attempt_at = {now},
    next_attempt_at = {lease_end}, updated_at = {now}"""


# What an attempt needs of each claimed delivery (`{claimed}`: the claimed rows, with what the
# claim learnt of them): its event, its endpoint's URL and secrets (or the store's callback
# secret), and the storefront installation the endpoint belongs to.
_ATTEMPT_NEEDS = """
SELECT c.id, c.public_id, c.attempts, c.url, c.endpoint_id, c.previous_token, c.previous_attempts,
       c.previous_start, c.left_behind, e.public_id AS event_public_id, e.type AS event_type, e.payload,
       w.url AS endpoint_url, w.secret, w.previous_secret, w.previous_secret_expires_at, w.enabled,
       w.failing_since, s.callback_secret, i.public_id AS integration_public_id
FROM {claimed} c
JOIN event e ON e.id = c.event_id
LEFT JOIN webhook_endpoint w ON w.id = c.endpoint_id
LEFT JOIN integration i ON i.webhook_endpoint_id = w.id
JOIN store s ON s.id = c.store_id
"""
_CLAIMED_COLUMNS = "id, public_id, attempts, url, endpoint_id, event_id, store_id"


def _converted(row: dict) -> dict:
    """Values as the models' fields give them, whichever driver read them."""
    converted = dict(row)
    for name, model_field in (("id", WebhookDelivery.id), ("endpoint_id", WebhookDelivery.id),
                              ("previous_start", WebhookDelivery.last_attempt_at),
                              ("previous_secret_expires_at", WebhookEndpoint.previous_secret_expires_at),
                              ("failing_since", WebhookEndpoint.failing_since), ("payload", Event.payload)):
        converted[name] = model_field.python_value(row[name])
    converted["enabled"] = bool(row["enabled"])
    converted["left_behind"] = bool(row["left_behind"])
    return converted


def _chosen_sql(placeholder, *, candidates: str, lock: str) -> str:
    names = ("now", "per_target", "per_store", "per_store_alone", "quick_since", "limit", "token", "lease_end",
             "rank_all_up_to")
    return _CHOSEN.replace("{candidates}", candidates).format(lock=lock, **{name: placeholder(name) for name in names})


# PostgreSQL: claims are serialised by an advisory lock (so the in-flight counts cannot change
# under a claim), and the lock, the selection, the claim and the read of what the attempts need
# are one round trip.
_CLAIM_POSTGRES = {
    among: "SELECT pg_advisory_xact_lock(%(lock_key)s);\n"
           + _chosen_sql(lambda name: f"%({name})s", lock="FOR UPDATE OF d SKIP LOCKED",
                         candidates=_AMONG.replace("{among}", "d.id = ANY(%(among)s::uuid[])") if among
                         else _DUE_CANDIDATES_POSTGRES)
           + ", claimed AS (" + _CLAIM.format(token="%(token)s", now="%(now)s", lease_end="%(lease_end)s")
           + " FROM chosen WHERE webhook_delivery.id = chosen.id RETURNING "
           + ", ".join(f"webhook_delivery.{column}" for column in _CLAIMED_COLUMNS.split(", "))
           + ", chosen.previous_token, chosen.previous_attempts, chosen.previous_start, chosen.left_behind)"
           + _ATTEMPT_NEEDS.format(claimed="claimed")
    for among in (False, True)
}


def _claim_within_caps_postgres(values: dict) -> list[dict]:
    return _dicts(db.execute_sql(_CLAIM_POSTGRES["among" in values], dict(values, lock_key=_DELIVERY_CLAIM_LOCK)))


# SQLite: the IMMEDIATE transaction already holds the only write lock; the chosen rows are read,
# then claimed by id (its RETURNING cannot name another table's columns).
_CHOSEN_SQLITE = {
    among: _chosen_sql(lambda name: f":{name}", lock="",
                       candidates=_AMONG.replace("{among}", "d.id IN (SELECT value FROM json_each(:among))") if among
                       else _DUE_CANDIDATES_SQLITE)
           + "SELECT * FROM chosen"
    for among in (False, True)
}


_ATTEMPT_NEEDS_SQLITE = _ATTEMPT_NEEDS.format(
    claimed=f"(SELECT {_CLAIMED_COLUMNS}, NULL AS previous_token, NULL AS previous_attempts, NULL AS previous_start, "
            "0 AS left_behind FROM webhook_delivery WHERE id IN (SELECT value FROM json_each(:ids)))")


def _claim_within_caps_sqlite(values: dict) -> list[dict]:
    params = dict(values, among=json.dumps(values["among"])) if "among" in values else values
    chosen = {row["id"]: row for row in _dicts(db.execute_sql(_CHOSEN_SQLITE["among" in values], params))}
    if not chosen:
        return []
    marks = ", ".join("?" for _ in chosen)
    db.execute_sql(_CLAIM.format(token="?", now="?", lease_end="?") + f" WHERE id IN ({marks})",
                   [values["token"], values["now"], values["lease_end"], values["now"], *chosen])
    # What the claim learnt of each row (its previous claim, whether more were left) comes from `chosen`.
    return [dict(row, **{name: chosen[row["id"]][name] for name in
                         ("previous_token", "previous_attempts", "previous_start", "left_behind")})
            for row in _dicts(db.execute_sql(_ATTEMPT_NEEDS_SQLITE, {"ids": json.dumps(list(chosen))}))]


def _dicts(cursor) -> list[dict]:
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]
