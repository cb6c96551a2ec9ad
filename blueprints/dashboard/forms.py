"""Reading the dashboard's HTML forms into the dicts the API's schemas load: an empty text field is
"not given", a checkbox is true when ticked (the schemas' booleans take only true or false)."""
from __future__ import annotations

from flask import request


def filled(names, source=None) -> dict:
    """The non-empty fields among `names` (query or form): an empty field means "not given"."""
    source = request.args if source is None else source
    return {name: source[name].strip() for name in names if source.get(name, "").strip()}


def form_fields(text=(), flags=()) -> dict:
    return {**filled(text, request.form), **{name: name in request.form for name in flags}}
