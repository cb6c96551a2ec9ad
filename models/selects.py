"""SELECTs whose SQL text is compiled once per database kind and reused with new values.

Peewee builds a query's SQL anew on every call: the read-back of a delivery claim (a six-table
join, once per claim) spent twice as long in Python building its text as in the database
(docs/performance.md, "Webhook throughput"). The rows are still converted by the query's own
fields; only the text is remembered, and only when each new value stands alone in the
parameters peewee built (otherwise every call is compiled, as before).
"""
from __future__ import annotations

from typing import Callable

import peewee as pw

_MARKER = "\x00compiled-select-{}"


class CompiledSelect:
    """`build(*values)` returns the query; `run(database, *values)` runs it, its text compiled once.
    The values go to the driver as they are: text and numbers, not values a field converts."""

    def __init__(self, build: Callable[..., pw.Query], arity: int):
        self._build = build
        self._arity = arity
        self._compiled: dict = {}

    def run(self, database, *values):
        kind = type(getattr(database, "obj", database))
        compiled = self._compiled.get(kind)
        if compiled is None:
            markers = [_MARKER.format(number) for number in range(self._arity)]
            query = self._build(*markers)
            sql, params = query.sql()
            params = list(params)
            if any(params.count(marker) != 1 for marker in markers):
                return list(self._build(*values))
            compiled = self._compiled[kind] = (query, sql, params, [params.index(marker) for marker in markers])
        query, sql, params, places = compiled
        params = list(params)
        for place, value in zip(places, values):
            params[place] = value
        return list(query._get_cursor_wrapper(database.execute_sql(sql, params)))
