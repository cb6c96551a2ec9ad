"""Shapes shared by every list route: the query's paging part."""
from marshmallow import RAISE, Schema, ValidationError, fields, validate, validates_schema


class ListQuerySchema(Schema):
    """`limit`, `starting_after`, `ending_before`; subclasses add the route's filters."""

    class Meta:
        unknown = RAISE

    limit = fields.Integer(load_default=20, strict=False,
                           validate=validate.Range(min=1, max=100, error="must be between 1 and 100"))
    starting_after = fields.String(load_default=None)
    ending_before = fields.String(load_default=None)

    @validates_schema
    def _one_direction(self, data, **kwargs):
        if data.get("starting_after") and data.get("ending_before"):
            raise ValidationError("give starting_after or ending_before, not both", "ending_before")


def envelope(items, *, has_more: bool, next_cursor: str | None) -> dict:
    return {"data": items, "has_more": has_more, "next_cursor": next_cursor if has_more else None}


def page_envelope(page, items: list) -> dict:
    """A list route's answer: `items` (the page's rows, dumped) and the cursor after the last row."""
    return envelope(items, has_more=page.has_more, next_cursor=page.next_cursor(lambda row: row.public_id))
