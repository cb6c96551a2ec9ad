"""schemathesis hooks for `make fuzz` (loaded through SCHEMATHESIS_HOOKS by scripts/fuzz.py): besides
what the document describes, some generated requests carry text no database can hold (a NUL byte
in a query value or path segment; a NUL or an unpaired surrogate in a JSON string), which must be
a documented 400 `validation_error`, never a 500 (docs/api.md#errors)."""
from hypothesis import strategies as st
import schemathesis

# Unpaired surrogates only in bodies: JSON can carry them escaped (`"\ud800"`), a URL cannot.
IN_BODY = st.sampled_from(["\x00", "\ud800", "\udfff", "a\x00b"])
IN_URL = st.sampled_from(["\x00", "a\x00b"])


def _spoil(values, bad, *, formatted=frozenset()):
    """Leave `values` as generated, or append a bad string to one of its string values. A value whose
    schema has a `format` (a URL, a uuid) gets a NUL, never a surrogate: schemathesis's own
    revalidation of a stateful step cannot encode one there and stops the run (our API answers it
    with a 400 all the same, as the body check shows for every other field)."""
    if not isinstance(values, dict):
        return st.just(values)
    names = sorted(name for name, value in values.items() if isinstance(value, str))
    if not names:
        return st.just(values)
    spoiled = st.sampled_from(names).flatmap(
        lambda name: (IN_URL if name in formatted else bad).map(lambda text: {**values, name: values[name] + text}))
    return st.one_of(st.just(values), spoiled)


def _formatted_body_fields(context) -> frozenset:
    """The body's top-level properties whose schema names a `format` (from the raw document)."""
    try:
        document = context.operation.schema.raw_schema
        body = context.operation.definition.raw["requestBody"]["content"]["application/json"]["schema"]
        properties = document["components"]["schemas"][body["$ref"].rsplit("/", 1)[-1]]["properties"]
    except (AttributeError, KeyError, TypeError):
        return frozenset()
    return frozenset(name for name, schema in properties.items() if "format" in schema)


@schemathesis.hook
def flatmap_body(context, body):
    return _spoil(body, IN_BODY, formatted=_formatted_body_fields(context))


@schemathesis.hook
def flatmap_query(context, query):
    return _spoil(query, IN_URL)


@schemathesis.hook
def flatmap_path_parameters(context, path_parameters):
    return _spoil(path_parameters, IN_URL)
