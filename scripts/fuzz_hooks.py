"""schemathesis hooks for `make fuzz` (loaded through SCHEMATHESIS_HOOKS by scripts/fuzz.py): besides
what the document describes, some generated requests carry text no database can hold (a NUL byte
in a query value or path segment; a NUL or an unpaired surrogate in a JSON string), which must be
a documented 400 `validation_error`, never a 500 (docs/api.md#errors)."""
from hypothesis import strategies as st
import schemathesis

# Unpaired surrogates only in bodies: JSON can carry them escaped (`"\ud800"`), a URL cannot.
IN_BODY = st.sampled_from(["\x00", "\ud800", "\udfff", "a\x00b"])
IN_URL = st.sampled_from(["\x00", "a\x00b"])


def _spoil(values, bad):
    """Leave `values` as generated, or append a bad string to one of its string values."""
    if not isinstance(values, dict):
        return st.just(values)
    names = sorted(name for name, value in values.items() if isinstance(value, str))
    if not names:
        return st.just(values)
    spoiled = st.tuples(st.sampled_from(names), bad).map(
        lambda choice: {**values, choice[0]: values[choice[0]] + choice[1]})
    return st.one_of(st.just(values), spoiled)


@schemathesis.hook
def flatmap_body(context, body):
    return _spoil(body, IN_BODY)


@schemathesis.hook
def flatmap_query(context, query):
    return _spoil(query, IN_URL)


@schemathesis.hook
def flatmap_path_parameters(context, path_parameters):
    return _spoil(path_parameters, IN_URL)
