"""Invoice metadata (docs/api.md#money-strings-and-sizes): flat, bounded, and sensitive keys never stored."""
import pytest

from models.base import db
from models.events import Event
from models.invoices import Invoice
from tests.blueprints.assertions import assert_legacy_error


def create(client, auth, metadata):
    return client.post("/v1/invoices", headers=auth, json={"amount": "10.00", "metadata": metadata})


def stored_metadata(invoice_id):
    return Invoice.get(Invoice.public_id == invoice_id).metadata


def test_strings_numbers_booleans_and_null_are_kept(client, auth):
    metadata = {"order": "A-17", "qty": 3, "weight": 1.25, "big": 10 ** 20, "gift": True, "vip": False,
                "note": None, "": "empty key is a key"}
    response = create(client, auth, metadata)
    assert response.status_code == 201
    invoice_id = response.get_json()["id"]
    assert client.get(f"/v1/invoices/{invoice_id}", headers=auth).get_json()["metadata"] == metadata
    assert stored_metadata(invoice_id) == metadata


def test_missing_or_null_metadata_is_null(client, auth):
    first = client.post("/v1/invoices", headers=auth, json={"amount": "1.00"}).get_json()["id"]
    second = create(client, auth, None).get_json()["id"]
    for invoice_id in (first, second):
        assert client.get(f"/v1/invoices/{invoice_id}", headers=auth).get_json()["metadata"] is None


def test_fifty_keys_of_forty_characters_with_500_character_values_fit(client, auth):
    metadata = {f"{i:02d}".ljust(40, "k"): "v" * 500 for i in range(50)}
    response = create(client, auth, metadata)
    assert response.status_code == 201
    assert stored_metadata(response.get_json()["id"]) == metadata


@pytest.mark.parametrize("metadata", [
    {f"k{i}": i for i in range(51)},                       # 51 keys
    {"k" * 41: "value"},                                   # key over 40 characters
    {"note": "v" * 501},                                   # value over 500 characters
    {"nested": {"a": 1}},                                  # not flat
    {"list": [1, 2]},
    {"empty_list": []},
])
def test_metadata_outside_the_rules_is_refused(client, auth, metadata):
    assert_legacy_error(create(client, auth, metadata), 400, "validation_error", param="metadata")
    assert Invoice.select().count() == 0


def test_a_sensitive_key_still_counts_towards_the_fifty(client, auth):
    metadata = {f"k{i}": i for i in range(50)} | {"password": "x"}
    assert_legacy_error(create(client, auth, metadata), 400, "validation_error", param="metadata")


def test_a_number_too_large_for_json_is_refused(client, auth):
    raw = b'{"amount": "10.00", "metadata": {"n": 1e400}}'
    response = client.post("/v1/invoices", headers=auth, data=raw, content_type="application/json")
    assert_legacy_error(response, 400, "validation_error", param="metadata")


SENSITIVE = {
    "password": "hunter2-pw", "user-passwd": "hunter2-passwd", "Client Secret": "hunter2-secret",
    "accessToken": "hunter2-token", "API-Key": "hunter2-apikey1", "apikey": "hunter2-apikey2",
    "private key": "hunter2-private", "Mnemonic": "hunter2-mnemonic", "seed-phrase": "hunter2-seed",
    "card_number": "4111111111111111", "CVV": "hunter2-cvv", "cvc2": "hunter2-cvc", "SSN": "hunter2-ssn",
    "Authorization": "Bearer hunter2-auth",
}


def test_sensitive_keys_are_dropped_before_storage(client, auth):
    response = create(client, auth, {"order_ref": "A1", **SENSITIVE})
    assert response.status_code == 201
    invoice_id = response.get_json()["id"]
    assert client.get(f"/v1/invoices/{invoice_id}", headers=auth).get_json()["metadata"] == {"order_ref": "A1"}
    assert stored_metadata(invoice_id) == {"order_ref": "A1"}
    # Neither the invoice row nor its event row holds any of the secrets, in any column.
    raw_rows = [db.execute_sql("SELECT * FROM invoice").fetchall(), db.execute_sql("SELECT * FROM event").fetchall()]
    dumped = repr(raw_rows)
    for secret in SENSITIVE.values():
        assert secret not in dumped
    event = Event.get(Event.type == "invoice.created")
    assert event.payload["data"]["object"]["metadata"] == {"order_ref": "A1"}


def test_only_sensitive_keys_leave_an_empty_object(client, auth):
    invoice_id = create(client, auth, {"secret": "s"}).get_json()["id"]
    assert stored_metadata(invoice_id) == {}
