"""Keyset pagination, newest first, on (created_at, id): a page costs the same at any depth."""
from __future__ import annotations

from dataclasses import dataclass

import peewee as pw

from core import ids
from core.errors import BadRequest


@dataclass(frozen=True)
class PageRequest:
    limit: int = 20
    starting_after: str | None = None
    ending_before: str | None = None

    @classmethod
    def from_query(cls, query: dict) -> "PageRequest":
        return cls(query["limit"], query.get("starting_after"), query.get("ending_before"))


@dataclass(frozen=True)
class Page:
    rows: list
    has_more: bool

    def next_cursor(self, public_id_of) -> str | None:
        return public_id_of(self.rows[-1]) if self.has_more and self.rows else None


def resolve_cursor(model, cursor: str | None, *, prefix: str, scope, param: str):
    """The (created_at, id) of the cursor row, which must belong to `scope` (the store)."""
    if cursor is None:
        return None
    if not ids.is_public_id(cursor, prefix):
        raise BadRequest("invalid_cursor", f"{param}: must be an id starting with {prefix}", param=param)
    row = (model.select(model.created_at, model.id)
           .where((model.public_id == cursor) & scope).first())
    if row is None:
        raise BadRequest("invalid_cursor", f"{param}: no such object in this store", param=param)
    # As the columns store them: inside a row-value comparison peewee does not convert the
    # values, and sqlite3 cannot bind a UUID object.
    return model.created_at.db_value(row.created_at), model.id.db_value(row.id)


def paginate(query: pw.ModelSelect, model, page: PageRequest, *, prefix: str, scope) -> Page:
    """Run `query` (already filtered) for one page. `scope` limits cursor lookups to the store."""
    key = pw.Tuple(model.created_at, model.id)
    after = resolve_cursor(model, page.starting_after, prefix=prefix, scope=scope, param="starting_after")
    before = resolve_cursor(model, page.ending_before, prefix=prefix, scope=scope, param="ending_before")
    if before is not None:
        # Walk towards newer rows from the cursor, then hand the page back newest first.
        rows = list(query.where(key > pw.Tuple(*before))
                    .order_by(model.created_at.asc(), model.id.asc()).limit(page.limit + 1))
        has_more = len(rows) > page.limit
        return Page(list(reversed(rows[:page.limit])), has_more)
    if after is not None:
        query = query.where(key < pw.Tuple(*after))
    rows = list(query.order_by(model.created_at.desc(), model.id.desc()).limit(page.limit + 1))
    return Page(rows[:page.limit], len(rows) > page.limit)
