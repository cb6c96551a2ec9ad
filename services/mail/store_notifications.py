"""A store's notification mail settings (docs/email.md#what-is-sent-when): where its mail goes (up
to five addresses) and which kinds it wants. The API (`/v1/store/notifications`) and the dashboard
both go through these functions; the body's shape is checked by schemas/notifications.py."""
from __future__ import annotations

import datetime as dt

from core import email_addresses
from core.errors import BadRequest
from infra.locks import lock_row
from models.base import db
from models.mail import MAX_RECIPIENTS, MERCHANT_KINDS, StoreNotifications
from models.stores import Store


def settings_of(store_id) -> dict:
    """`{"recipients": [...], "kinds": {kind: bool}}`: a store that never chose has no recipients
    and every kind on (nothing is sent until it names an address)."""
    row = StoreNotifications.get_or_none(StoreNotifications.store == store_id)
    recipients, chosen = (row.recipients, row.kinds) if row else ([], {})
    return {"recipients": list(recipients), "kinds": {kind: bool(chosen.get(kind, True)) for kind in MERCHANT_KINDS}}


def update(store_id, *, now: dt.datetime, recipients: list | None = None, kinds: dict | None = None) -> dict:
    """Change what is given (a field left out keeps its value); returns the settings as they are now.
    Under the store's row lock: two changes at once each keep the other's (one kind off each)."""
    checked = _checked_recipients(recipients) if recipients is not None else None
    if kinds is not None:
        unknown = sorted(set(kinds) - set(MERCHANT_KINDS))
        if unknown:
            raise BadRequest("validation_error", f"kinds.{unknown[0]}: unknown kind of mail; the kinds are "
                             f"{', '.join(MERCHANT_KINDS)}", param=f"kinds.{unknown[0]}")
    with db.atomic():
        lock_row(Store, store_id)
        current = settings_of(store_id)
        if checked is not None:
            current["recipients"] = checked
        current["kinds"].update(kinds or {})
        _write(store_id, current, now=now)
    return current


def _write(store_id, current: dict, *, now: dt.datetime) -> None:
    (StoreNotifications.insert(store=store_id, recipients=current["recipients"], kinds=current["kinds"],
                               updated_at=now)
     .on_conflict(conflict_target=[StoreNotifications.store],
                  update={StoreNotifications.recipients: current["recipients"],
                          StoreNotifications.kinds: current["kinds"], StoreNotifications.updated_at: now})
     .execute())


def _checked_recipients(recipients: list) -> list[str]:
    if len(recipients) > MAX_RECIPIENTS:
        raise BadRequest("validation_error", f"recipients: at most {MAX_RECIPIENTS} addresses",
                         param="recipients")
    kept: list[str] = []
    for index, address in enumerate(recipients):
        problem = email_addresses.address_problem(address)
        if problem:
            raise BadRequest("validation_error", f"recipients[{index}]: {problem}", param=f"recipients[{index}]")
        address = email_addresses.normalized(address)
        if address not in kept:
            kept.append(address)
    return kept


def recipients_for(store_id, kind: str) -> list[str]:
    """Where a mail of `kind` about this store goes: its own addresses only, when it wants the kind."""
    chosen = settings_of(store_id)
    return chosen["recipients"] if chosen["kinds"].get(kind) else []
