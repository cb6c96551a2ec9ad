"""The audit log: who changed what, when, from which address (docs/dashboard.md#audit-log).
Written in the same transaction as the change where the change is ours to wrap."""
from __future__ import annotations

import datetime as dt

from models.people import AuditEntry, User
from models.stores import Store

DETAIL_LIMIT = 500


def record(store: Store, actor: User | None, action: str, *, now: dt.datetime, target: str | None = None,
           detail: str | None = None, address: str | None = None) -> AuditEntry:
    return AuditEntry.create(
        store=store.id, user=actor.id if actor else None, actor=actor.email if actor else "operator",
        action=action, target=(target or None) and str(target)[:128],
        detail=(detail or None) and detail[:DETAIL_LIMIT], address=(address or None) and address[:64],
        created_at=now)


def newest(store: Store, *, before_id: int | None = None, limit: int = 50) -> tuple[list[AuditEntry], bool]:
    """A page of the store's entries, newest first, keyset on the id (ids only grow)."""
    query = AuditEntry.select().where(AuditEntry.store == store.id)
    if before_id is not None:
        query = query.where(AuditEntry.id < before_id)
    rows = list(query.order_by(AuditEntry.id.desc()).limit(limit + 1))
    return rows[:limit], len(rows) > limit
