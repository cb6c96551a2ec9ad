"""The delivery claim (docs/webhooks.md#fairness): which due deliveries a run may attempt now, and
what their attempts need, in one transaction.

A delivery's claim is written on the row itself: `claim_token`, `attempts + 1`, `last_attempt_at`,
and `next_attempt_at` pushed out by the lease (a claimed row is "in flight" until that passes or
its result clears the token). Claims are serialised (an advisory lock on PostgreSQL; SQLite's
IMMEDIATE transaction already is), so the in-flight counts a claim reads cannot change under it.
A claimed row whose lease ran out belonged to a worker that died mid-attempt: that attempt is
recorded as `interrupted`.

The claim is SQL, written out whole for each database beside this module
(delivery_claim.postgres.sql, delivery_claim.sqlite.sql; what they share is written alike, and a
test holds them to it), in two forms that differ in what they choose among: a fan-out's claim
(`…_new`), the deliveries it just created; any other (`…_due`), every due delivery while at most
RANK_ALL_UP_TO are due (a `LIMIT`ed count says which), else each target's oldest `per_target + 1`
(one more than it could take, so the claim knows when some are left), read target by target
through the index webhook_delivery_target_due. Ranking every due delivery costs in proportion to them (218 ms with
50,000 due, and claims take turns); walking the targets costs in proportion to the targets with
any pending delivery, due or not (~7 µs each: 44 ms beside 5,000 failing receivers' retries).
Only one of those two runs: the other's condition is false before any row is read. Each database
has its own form of "a target's oldest few": PostgreSQL a LATERAL subquery (it would run a
correlated IN once per row), SQLite a correlated IN (it has no LATERAL).
"""
from __future__ import annotations

from dataclasses import dataclass, field
import datetime as dt
import json
from pathlib import Path
import re
import secrets
from typing import NamedTuple
import uuid

from core import clock, ids
from infra import database, heartbeats
from infra.claims import lease_until
from infra.locks import write_transaction
from models.base import db
from models.events import Event
from models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from services.webhooks.delivery_policy import QUICK_ATTEMPT, DeliveryCaps, DeliveryPolicy
from services.webhooks.webhook_sending import Work, render_body

RANK_ALL_UP_TO = 200         # walking was already the quicker at 500 due (docs/performance.md)
_ADVISORY_LOCK = 0x7E4D_0013


def statements(path: Path) -> dict[str, str]:
    """The statements of an SQL file, each after its `-- name: …` line."""
    parts = re.split(r"^-- name: (\w+)\n", path.read_text(), flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


POSTGRES_SQL = Path(__file__).with_name("delivery_claim.postgres.sql")
SQLITE_SQL = Path(__file__).with_name("delivery_claim.sqlite.sql")
_POSTGRES = statements(POSTGRES_SQL)
_SQLITE = statements(SQLITE_SQL)


class ClaimedDelivery(NamedTuple):
    """A claimed delivery as the claim reads it: the row, what the claim learnt of it, and what its
    attempt needs (its event, its endpoint's URL and secrets or the store's callback secret, and
    the storefront installation the endpoint belongs to). The fields are the claim's columns."""
    id: uuid.UUID
    public_id: str
    attempts: int                           # counting this one
    url: str | None                         # a legacy callback's
    endpoint_id: uuid.UUID | None
    previous_token: str | None              # a lapsed claim's: its attempt was interrupted
    previous_attempts: int | None
    previous_start: dt.datetime | None
    left_behind: bool                       # the caps left due deliveries of its target or store
    event_public_id: str
    event_type: str
    payload: dict
    endpoint_url: str | None
    secret: str | None
    previous_secret: str | None
    previous_secret_expires_at: dt.datetime | None
    enabled: bool
    failing_since: dt.datetime | None
    callback_secret: str | None
    integration_public_id: str | None

    def work(self, token: str, now: dt.datetime) -> Work:
        """What the sending thread needs for this attempt."""
        if self.endpoint_id is not None:
            keys = [self.secret]
            expires = self.previous_secret_expires_at
            if self.previous_secret and expires and expires > now:
                keys.append(self.previous_secret)
            url, enabled, failing_since = self.endpoint_url, self.enabled, self.failing_since
        else:
            keys, url, enabled, failing_since = [self.callback_secret], self.url, True, None
        return Work(delivery_id=self.id, public_id=self.public_id, number=self.attempts, claim_token=token, url=url,
                    secrets=keys, body=render_body(self.payload), event_public_id=self.event_public_id,
                    event_type=self.event_type, endpoint_id=self.endpoint_id, endpoint_enabled=enabled,
                    endpoint_failing_since=failing_since, integration_public_id=self.integration_public_id)


# Values as the models' fields give them, whichever driver read them.
_PARSED = {"id": WebhookDelivery.id.python_value, "endpoint_id": WebhookDelivery.id.python_value,
           "previous_start": WebhookDelivery.last_attempt_at.python_value, "left_behind": bool,
           "payload": Event.payload.python_value, "enabled": bool,
           "previous_secret_expires_at": WebhookEndpoint.previous_secret_expires_at.python_value,
           "failing_since": WebhookEndpoint.failing_since.python_value}
_PARSERS = tuple(_PARSED.get(name) for name in ClaimedDelivery._fields)
_LEARNT = slice(ClaimedDelivery._fields.index("previous_token"), ClaimedDelivery._fields.index("left_behind") + 1)


def _claimed(cursor) -> list[tuple]:
    assert tuple(column[0] for column in cursor.description) == ClaimedDelivery._fields
    return cursor.fetchall()


def _parsed(row: tuple) -> ClaimedDelivery:
    return ClaimedDelivery._make(value if parse is None else parse(value) for parse, value in zip(_PARSERS, row))


@dataclass(frozen=True)
class Claimed:
    taken: int
    # Due deliveries were left behind: the limit was reached, or a target or store the claim took
    # from had more than its cap let it take. (A claim that took nothing says False.)
    more_due: bool
    rows: list[ClaimedDelivery] = field(default_factory=list, compare=False)


def claim_deliveries(token: str, caps: DeliveryCaps, *, now: dt.datetime, limit: int, among=None) -> Claimed:
    """Claim up to `limit` due deliveries under `token` for their next attempt; returns how many,
    and whether due ones were left (so a run knows to claim again as its attempts finish).

    Stores take turns (each store's oldest due delivery first, then each one's second, …), and
    no target or store goes over its cap, so one store's backlog or slow endpoints never hold
    the slots another store's new events need (docs/webhooks.md#fairness). `among`: only these
    delivery ids (the ones a fan-out just created)."""
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
    values = dict(token=token, now=at(now), limit=limit, lease_end=at(lease_until(now, caps.lease_seconds)),
                  quick_since=at(now - QUICK_ATTEMPT), per_target=caps.per_target, per_store=caps.per_store,
                  per_store_alone=max(caps.per_store, caps.per_store_alone or 0), rank_all_up_to=RANK_ALL_UP_TO,
                  all_stores=caps.all_stores,       # NULL in the SQL: no "WHEN" of the shrunk cap holds
                  among=None if among is None else [WebhookDelivery.id.db_value(delivery_id) for delivery_id in among])
    claim = database.for_this_database(postgres=_claim_postgres, sqlite=_claim_sqlite)
    rows = [_parsed(row) for row in claim(values)]
    interrupted = [row for row in rows if row.previous_token is not None]
    if interrupted:
        WebhookAttempt.insert_many([
            dict(id=ids.new_uuid(), delivery=row.id, number=row.previous_attempts, outcome="interrupted",
                 error="the worker stopped during this attempt", started_at=row.previous_start or now)
            for row in interrupted]).execute()
    more_due = len(rows) == limit or any(row.left_behind for row in rows)
    return Claimed(len(rows), more_due, rows)


def _claim_postgres(values: dict) -> list[tuple]:
    claim = _POSTGRES["claim_due" if values["among"] is None else "claim_new"]
    return _claimed(db.execute_sql(claim, dict(values, lock_key=_ADVISORY_LOCK)))


def _claim_sqlite(values: dict) -> list[tuple]:
    among = values["among"]
    choose = _SQLITE["choose_due" if among is None else "choose_new"]
    values = dict(values, among=None if among is None else json.dumps(among))
    # What the claim learnt of each row (its previous claim, whether more were left), by id.
    chosen = {row[0]: row[1:] for row in db.execute_sql(choose, values).fetchall()}
    if not chosen:
        return []
    claimed = json.dumps(list(chosen))
    db.execute_sql(_SQLITE["claim"], dict(values, ids=claimed))
    rows = _claimed(db.execute_sql(_SQLITE["read"], {"ids": claimed}))
    return [row[:_LEARNT.start] + chosen[row[0]] + row[_LEARNT.stop:] for row in rows]


def claim_for_run(policy: DeliveryPolicy, *, now: dt.datetime, limit: int) -> tuple[list[Work], bool]:
    """Up to `limit` due deliveries for a run (stores in turn, within the per-endpoint and
    per-store caps), each as what its attempt needs; and whether due deliveries were left."""
    token = secrets.token_hex(16)
    claimed = claim_deliveries(token, policy.caps, now=now, limit=limit)
    return work_of(claimed.rows, token), claimed.more_due


def claim_due(policy: DeliveryPolicy, *, now: dt.datetime, limit: int) -> list[Work]:
    """`claim_for_run`'s work alone."""
    return claim_for_run(policy, now=now, limit=limit)[0]


def keep_claimed(token: str, *, lease_seconds: int, now) -> heartbeats.Beating:
    """Renew, every heartbeat until stopped, the claim of the deliveries `token` still holds (their
    attempts in flight or not yet recorded): `next_attempt_at` pushed to a lease from `now()`, the
    run's clock. It ends itself once every result is written (the token cleared)."""
    def beat() -> bool:
        return WebhookDelivery.update(next_attempt_at=lease_until(now(), lease_seconds)).where(
            WebhookDelivery.claim_token == token).execute() > 0
    return heartbeats.keep_alive(beat)


def work_of(rows: list[ClaimedDelivery], token: str) -> list[Work]:
    """What each claimed delivery's attempt needs."""
    now = clock.utcnow()
    return [row.work(token, now) for row in rows]
