"""Queries on hot paths run from SQL text that peewee compiled once.

Peewee builds a query's SQL anew on every call, and on the paths that run for every request or
every webhook event that cost as much as the database's own work (docs/performance.md): two INSERTs
of a create-invoice request took a quarter of its CPU, and the fan-out's three reads about 1.5 ms
an event. The query is still written with peewee (and its fields convert the values); only the
text is remembered, per caller's key and database kind, and only when the values peewee would
bind are exactly the ones the caller passes, in the same order.
"""
from __future__ import annotations

from models.base import db

_texts: dict[tuple, str] = {}


def execute(key: tuple, params: list, build, *, database=db):
    """Run the query `build()` makes with `params` (the values peewee would bind, converted by
    their fields' `db_value`, in its order) on `database` (the models' own unless given: a model
    bound elsewhere brings its own); its text compiled the first time for `key` and the database
    kind. `key` must name everything that shapes the text (never a value). Returns the cursor."""
    full_key = (*key, _kind(database))
    sql = _texts.get(full_key)
    if sql is None:
        sql, peewee_params = build().sql()
        if list(peewee_params) == params:        # the same values peewee would send: safe to reuse
            _texts[full_key] = sql
        else:
            params = peewee_params
    return database.execute_sql(sql, params)


def is_compiled(key: tuple, *, database=db) -> bool:
    """Whether `key`'s text is remembered (tests: a caller whose values differ from peewee's never is)."""
    return (*key, _kind(database)) in _texts


def _kind(database) -> type:
    return type(getattr(database, "obj", database))       # behind the models' Proxy, the database itself
