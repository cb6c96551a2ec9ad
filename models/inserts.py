"""INSERT of new rows, its SQL text compiled once per model, database kind and column list
(models/compiled.py). The columns and their conversions still come from the model alone.
"""
from __future__ import annotations

import peewee as pw

from models import compiled


def insert(instance: pw.Model) -> pw.Model:
    """INSERT `instance`, a new row whose primary key is already set (ids are made here, not by
    the database), with the values and defaults it holds. What `Model.create` does, without the
    RETURNING of a key we already have."""
    model = type(instance)
    data = instance.__data__
    columns = [field for field in model._meta.sorted_fields if field.name in data]   # peewee's order
    params = [field.db_value(data[field.name]) for field in columns]
    _execute(model, columns, None, params, lambda: model.insert(data).returning())
    instance._dirty.clear()
    return instance


def insert_rows(model: type[pw.Model], rows: list[dict]) -> int:
    """INSERT new rows (each naming the same fields, primary keys set) in one statement, its SQL
    text compiled once per model, database kind, column list and number of rows: a delivery run
    inserts a fan-out's deliveries and a batch's attempts, 16 rows of 13 columns whose text peewee
    took longer to build than the database to write. Defaults as `Model(**row)` sets them.
    Returns how many rows were inserted."""
    if not rows:
        return 0
    columns, datas = new_rows(model, rows)
    params = [field.db_value(data[field.name]) for data in datas for field in columns]
    _execute(model, columns, len(rows), params, lambda: model.insert_many(datas).returning())
    return len(rows)


def new_rows(model: type[pw.Model], rows: list[dict]) -> tuple[list[pw.Field], list[dict]]:
    """The columns of new rows of `model` (peewee's order) and each row's values by field name,
    defaults as `Model(**row)` sets them. Every row must name the same fields."""
    datas = [model(**row).__data__ for row in rows]
    names = set(datas[0])
    if any(set(data) != names for data in datas[1:]):   # never drop a later row's columns silently
        raise ValueError(f"every new {model.__name__} row must name the same fields")
    return [field for field in model._meta.sorted_fields if field.name in names], datas   # peewee's order


def _execute(model: type[pw.Model], columns: list, rows: int | None, params: list, build) -> None:
    """Run the INSERT with `params`, its text compiled by peewee (`build()`) the first time for
    this model, column list and number of rows (None: one row's `insert`)."""
    compiled.execute(("insert", model, tuple(field.name for field in columns), rows), params, build,
                     database=model._meta.database)
