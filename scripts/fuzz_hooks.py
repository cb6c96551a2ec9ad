"""schemathesis hooks for `make fuzz` (loaded through SCHEMATHESIS_HOOKS by scripts/fuzz.py): besides
what the document describes, some generated requests carry text no database can hold (a NUL byte
in a query value or path segment; a NUL or an unpaired surrogate in a JSON string), which must be
a documented 400 `validation_error`, never a 500 (docs/api.md#errors).

No unpaired surrogates in the stateful phase's bodies (a NUL instead): a step whose body a link
filled in is validated again by schemathesis itself, through a validator that cannot take a
surrogate anywhere in the body, and the step ends in the tool's own UnicodeEncodeError before any
request is sent (an error of the run, which scripts/fuzz.py fails on, not a finding about the API).
The other phases send them."""
import threading

from hypothesis import strategies as st
import schemathesis

# Unpaired surrogates only in bodies: JSON can carry them escaped (`"\ud800"`), a URL cannot.
IN_BODY = st.sampled_from(["\x00", "\ud800", "\udfff", "a\x00b"])
IN_URL = st.sampled_from(["\x00", "a\x00b"])
STATEFUL_THREAD = "schemathesis_stateful_tests"      # the thread schemathesis runs that phase on


def _sendable_in_this_phase(text: str) -> str:
    if threading.current_thread().name == STATEFUL_THREAD and any("\ud800" <= char <= "\udfff" for char in text):
        return "\x00"
    return text


def _spoil(values, bad):
    """Leave `values` as generated, or append a bad string to one of its string values."""
    if not isinstance(values, dict):
        return st.just(values)
    names = sorted(name for name, value in values.items() if isinstance(value, str))
    if not names:
        return st.just(values)
    spoiled = st.sampled_from(names).flatmap(lambda name: bad.map(lambda text: {**values, name: values[name] + text}))
    return st.one_of(st.just(values), spoiled)


@schemathesis.hook
def flatmap_body(context, body):
    return _spoil(body, IN_BODY.map(_sendable_in_this_phase))


@schemathesis.hook
def flatmap_query(context, query):
    return _spoil(query, IN_URL)


@schemathesis.hook
def flatmap_path_parameters(context, path_parameters):
    return _spoil(path_parameters, IN_URL)
