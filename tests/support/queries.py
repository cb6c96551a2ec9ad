"""Counting the SQL statements a piece of code runs, per table and kind, for query budgets.

peewee logs every statement it sends (logger `peewee`, level DEBUG) from whichever thread sends
it, so a handler on that logger sees the pollers' worker threads too. A statement counts once
for each table it names (after FROM, JOIN, UPDATE or INTO), under its kind: select, insert,
update or delete. Transaction control (BEGIN, SAVEPOINT, COMMIT…) names no table.
"""
from __future__ import annotations

import collections
import contextlib
import logging
import re

_TABLE = re.compile(r'\b(?:FROM|JOIN|UPDATE|INTO)\s+"?([A-Za-z_][A-Za-z0-9_]*)"?', re.IGNORECASE)
_KINDS = ("select", "insert", "update", "delete")


def tables_of(sql: str) -> tuple[str, set[str]]:
    """(kind, tables named) of one statement; kind is '' for anything but the four above."""
    words = sql.lstrip("( ").split(None, 1)
    kind = words[0].lower() if words and words[0].lower() in _KINDS else ""
    return kind, set(_TABLE.findall(sql))


class QueryCount(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.statements: list[str] = []

    def emit(self, record):
        message = record.msg
        if isinstance(message, tuple) and message and isinstance(message[0], str):
            self.statements.append(message[0])

    def count(self, table: str, kind: str) -> int:
        """How many statements of `kind` named `table`."""
        return self.by_table()[(table, kind)]

    def by_table(self) -> collections.Counter:
        """(table, kind) -> statements, for a readable failure message."""
        counted = collections.Counter()
        for sql in self.statements:
            kind, tables = tables_of(sql)
            counted.update((table, kind) for table in tables)
        return counted


@contextlib.contextmanager
def counting_queries():
    """Count what the block sends to the database: `with counting_queries() as queries: …`."""
    logger = logging.getLogger("peewee")
    handler, level = QueryCount(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
