"""One provider answer, one write: what an invoice's and a refund's answers share
(invoice_states.Answer, refund_states.Answer; docs/payment-engine.md#one-answer-one-write).

An answer decides on the row as it was read, then writes everything it decided in one
compare-and-set that holds only while the columns its decisions read are still as read. A
concurrent writer that won in between makes it `Outdated`: the caller rolls back, reads the row
again and decides again (`apply_until_current`).
"""
from __future__ import annotations

import datetime as dt

from infra import locks
from providers import base

APPLY_ATTEMPTS = 3     # reads and re-applies of one answer when a concurrent writer keeps winning


class Outdated(Exception):
    """The row changed between the read an answer was built on and its write: nothing was written."""


class Decisions:
    """The changes an answer decided on a row (`read`), and `row`: the row as they leave it so far."""

    def __init__(self, read, *, now: dt.datetime):
        self.read, self.now = read, now
        self.row = type(read)(**read.__data__)
        self.changes: dict = {}
        self._held: list = []           # (reason, detail) newly set aside: each `write` logs them once

    def set(self, **changes) -> None:
        for name, value in changes.items():
            if getattr(self.row, name) != value:
                self.changes[name] = value
                setattr(self.row, name, value)

    def learn(self, status) -> bool:
        """Note the provider's status (and its reference, once) on the row; False when its numbers
        cannot be trusted (docs/payment-engine.md): then the row is only held for review."""
        reason = base.untrusted_reason(status)
        if reason is not None:
            self.hold(reason, detail=f"provider answered {status!r}")
            return False
        self.set(provider_status=status.status)
        if status.correlation_id and self.read.provider_ref is None:
            self.set(provider_ref=status.correlation_id)
        return True

    def hold(self, reason: str, detail: str = "") -> None:
        """Set the row aside for an operator (`flask --app wsgi invoices stuck` / `refunds stuck`): the
        same reason again writes nothing, so it is logged and counted once."""
        if self.row.review_reason != reason:
            self.set(review_reason=reason)
            self._held.append((reason, detail))

    def as_read(self, names) -> list:
        """Query conditions: each of these columns still holds the value read."""
        model = type(self.read)
        return [getattr(model, name).is_null() if getattr(self.read, name) is None
                else getattr(model, name) == getattr(self.read, name) for name in names]

    def compare_and_set(self, conditions: list):
        """The one UPDATE … RETURNING of the decided changes, while `conditions` hold; the new row."""
        model = type(self.read)
        written = list(model.update(**self.changes).where(model.id == self.read.id, *conditions)
                       .returning(model).execute())
        if not written:
            raise Outdated(self.read.public_id)
        return written[0]


def apply_until_current(apply, row, *, log, what: str):
    """`apply(row)` in one write transaction; when a concurrent writer made it `Outdated`, again on
    the row as it is now, up to APPLY_ATTEMPTS times (then the next poll asks again: answers are
    idempotent). Returns what `apply` returned, or the row as last read."""
    for _ in range(APPLY_ATTEMPTS):
        try:
            # It reads (the transactions recorded so far) before it writes: on SQLite the write lock
            # is taken first, so a concurrent writer waits instead of failing the late upgrade.
            with locks.write_transaction():
                return apply(row)
        except Outdated:
            row = type(row).get_by_id(row.id)
    log.warning("%s %s kept changing while a provider answer was applied", what, row.public_id)
    return row
