"""Work that must wait for a commit: the one after-commit hook (like Django's `transaction.on_commit`).

`on_commit(callback)` runs `callback` once the outermost transaction of this thread commits, runs
it at once when no transaction is open, and drops it when the transaction rolls back, or when the
savepoint (a nested `db.atomic()`) it was registered in rolls back. Every nudge of a worker goes
through here (infra/nudges.py): a job must never look for a row that is not
committed yet, and a nudge must never be lost because it was asked for inside a transaction.

Peewee keeps the callbacks (`Database.after_commit`); the `db` proxy of models/base.py adds the
savepoint rule, which peewee lacks.
"""
from __future__ import annotations

import logging

import peewee as pw

log = logging.getLogger("tender.after_commit")


def on_commit(callback) -> None:
    """Run `callback()` after the current outermost transaction commits (at once outside one)."""
    from models.base import db     # here: models/base.py builds `db` from the proxy class below

    db.after_commit(_logged(callback))


def _logged(callback):
    # The commit has happened: a failing callback (a nudge whose Redis is down) must not turn the
    # committed request into an error. The sweeps find the work anyway.
    def run():
        try:
            callback()
        except Exception:
            log.exception("after-commit callback %r failed", callback)
    return run


class _Savepoint(pw._savepoint):
    """A savepoint that forgets the callbacks registered inside it when it rolls back."""

    def _begin(self):
        self.callbacks_before = len(self.db._state.commit_callbacks)
        super()._begin()

    def rollback(self, begin=True):
        del self.db._state.commit_callbacks[self.callbacks_before:]
        super().rollback(begin)


class DatabaseProxy(pw.DatabaseProxy):
    """The models' database handle (models/base.py `db`); its nested `atomic()` blocks are
    savepoints that drop their callbacks on rollback."""

    def savepoint(self):
        return _Savepoint(self)
