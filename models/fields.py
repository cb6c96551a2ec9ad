"""Column types shared by the models (and the frozen copies in migrations)."""
from decimal import Decimal
import json

import peewee as pw


class AmountField(pw.DecimalField):
    """Exact money: NUMERIC(36, 18) on PostgreSQL, text on SQLite; always `Decimal` in Python."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("max_digits", 36)
        kwargs.setdefault("decimal_places", 18)
        kwargs.setdefault("auto_round", False)
        super().__init__(*args, **kwargs)

    def db_value(self, value):
        return None if value is None else str(Decimal(value))

    def python_value(self, value):
        return None if value is None else Decimal(str(value))


class JSONTextField(pw.TextField):
    """A JSON document stored as text, so SQLite and PostgreSQL behave the same."""

    def db_value(self, value):
        return None if value is None else json.dumps(value, separators=(",", ":"), sort_keys=True)

    def python_value(self, value):
        return None if value is None else json.loads(value)
