"""core/ids.py: public ids are prefix + 32 lowercase hex (docs/api.md#identifiers-and-secrets); the API's id pattern."""
import re
import uuid

import pytest

from core import ids


@pytest.mark.parametrize("prefix", ["inv_", "txn_", "evt_", "req_", "plink_"])
def test_new_public_ids_are_prefix_and_32_lowercase_hex(prefix):
    value = ids.new_public_id(prefix)
    assert re.fullmatch(re.escape(prefix) + r"[0-9a-f]{32}", value)


def test_new_public_ids_do_not_repeat():
    assert len({ids.new_public_id("inv_") for _ in range(2000)}) == 2000


@pytest.mark.parametrize("value, prefix", [
    ("inv_" + "a" * 32, "inv_"), ("inv_" + "0" * 20, "inv_"), ("inv_" + "z" * 32, "inv_"),
    ("txn_" + "1" * 32, "txn_"), ("plink_" + "a" * 32, "plink_"),
    ("plpub_" + "a" * 12, "plpub_"), ("plpub_" + "a" * 32, "plpub_"),
])
def test_well_formed_ids(value, prefix):
    assert ids.is_public_id(value, prefix)


@pytest.mark.parametrize("value, prefix", [
    ("txn_" + "a" * 32, "inv_"), ("inv_" + "A" * 32, "inv_"), ("inv_" + "a" * 19, "inv_"),
    ("inv_" + "a" * 33, "inv_"), ("inv_", "inv_"), ("inv_" + "a" * 31 + "-", "inv_"),
    ("plpub_" + "a" * 20, "plpub_"), (None, "inv_"), (12, "inv_"), (str(uuid.uuid4()), "inv_"),
])
def test_malformed_ids(value, prefix):
    assert not ids.is_public_id(value, prefix)


def test_parse_uuid():
    value = uuid.uuid4()
    assert ids.parse_uuid(str(value)) == value
    assert ids.parse_uuid(value.hex) == value
    for bad in ("nope", "", None, 12, "inv_" + "a" * 32):
        assert ids.parse_uuid(bad) is None
