"""Finding a store's rows: by public id, and narrowed by a list route's filters."""
from __future__ import annotations

from core import ids
from core.errors import NotFound


def one_in_store(model, store, public_id: str, *, prefix: str, code: str, noun: str, query=None):
    """The store's row `public_id` (from `query`, the model's plain select by default). A malformed
    id, or another store's row, is simply not found: an id never tells whether it exists elsewhere."""
    row = None
    if ids.is_public_id(public_id, prefix):
        query = model.select() if query is None else query
        row = query.where((model.public_id == public_id) & (model.store == store.id)).first()
    if row is None:
        raise NotFound(code, f"No {noun} {public_id!r} in this store.")
    return row


def narrowed(query, filters: dict, *, equal: dict, created_at=None):
    """`query` with the filters a list route took: each of `equal` ({filter: field}) that is set,
    and the `created_after`/`created_before` range on `created_at` (after inclusive, before not)."""
    for name, field in equal.items():
        if filters.get(name) is not None:
            query = query.where(field == filters[name])
    if created_at is not None and filters.get("created_after"):
        query = query.where(created_at >= filters["created_after"])
    if created_at is not None and filters.get("created_before"):
        query = query.where(created_at < filters["created_before"])
    return query
