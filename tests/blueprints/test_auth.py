"""Bearer keys (docs/api.md#authentication-and-scopes): digests only, kinds, scopes, revocation, expiry; 401 is always standard."""
import datetime as dt
import hashlib
import re

from playhouse.test_utils import count_queries
import pytest

from core.clock import utcnow
from core.errors import DomainError
from models.base import db
from models.stores import ApiKey
from services.accounts import api_keys
from tests import factories
from tests.blueprints.assertions import assert_error, assert_legacy_error

ROUTES = [
    ("get", "/v1/invoices"), ("post", "/v1/invoices"), ("get", "/v1/invoices/inv_" + "a" * 32),
    ("get", "/v1/invoices/inv_" + "a" * 32 + "/status"), ("post", "/v1/invoices/inv_" + "a" * 32 + "/cancel"),
    ("get", "/v1/invoices/inv_" + "a" * 32 + "/transactions"), ("get", "/v1/transactions"),
    ("get", "/v1/transactions/txn_" + "a" * 32), ("get", "/v1/transactions/by-hash/0xabc"),
]


def bearer(raw):
    return {"Authorization": f"Bearer {raw}"}


def key_row(raw) -> ApiKey:
    return ApiKey.get(ApiKey.digest == hashlib.sha256(raw.encode()).hexdigest())


@pytest.mark.parametrize("method, path", ROUTES)
def test_missing_key_is_401_in_the_standard_shape_on_every_route(client, app, method, path):
    assert_error(getattr(client, method)(path, json={"amount": "1.00"}), 401, "missing_api_key")


@pytest.mark.parametrize("method, path", ROUTES)
def test_unknown_key_is_401_on_every_route(client, app, method, path):
    response = getattr(client, method)(path, headers=bearer("sk_live_" + "0" * 40), json={"amount": "1.00"})
    assert_error(response, 401, "invalid_api_key")


@pytest.mark.parametrize("header, code", [
    ("", "missing_api_key"),
    ("   ", "missing_api_key"),
    ("Bearer", "invalid_api_key"),
    ("Bearer ", "invalid_api_key"),
    ("Basic dXNlcjpwYXNz", "invalid_api_key"),
    ("Token {key}", "invalid_api_key"),
    ("{key}", "invalid_api_key"),                        # no scheme
    ("Bearer {key}x", "invalid_api_key"),                # one character too many
    ("Bearer {key_upper}", "invalid_api_key"),
    ("Bearer pk_live_" + "0" * 40, "invalid_api_key"),
])
def test_malformed_authorization_is_401(client, api_key, header, code):
    value = header.format(key=api_key, key_upper=api_key.upper())
    assert_error(client.get("/v1/invoices", headers={"Authorization": value}), 401, code)


def test_401_on_create_invoice_is_standard_not_legacy(client, app):
    assert_error(client.post("/v1/invoices", json={"amount": "1.00"}), 401, "missing_api_key")
    assert_error(client.post("/v1/invoices", headers=bearer("sk_live_" + "1" * 40), json={"amount": "1.00"}),
                 401, "invalid_api_key")


def test_the_scheme_is_case_insensitive(client, api_key):
    assert client.get("/v1/invoices", headers={"Authorization": f"bearer {api_key}"}).status_code == 200


def test_keys_are_stored_only_as_sha256_digests(client, store, api_key):
    assert re.fullmatch(r"sk_live_[0-9a-f]{40}", api_key)
    row = key_row(api_key)
    assert row.digest == hashlib.sha256(api_key.encode()).hexdigest()
    assert row.last4 == api_key[-4:]
    assert row.kind == "standard"
    raw_rows = repr(db.execute_sql("SELECT * FROM api_key").fetchall())
    assert api_key not in raw_rows and api_key[8:] not in raw_rows


def test_an_unknown_key_costs_one_query(client, app):
    with count_queries() as counter:
        client.get("/v1/invoices", headers=bearer("sk_live_" + "2" * 40))
    assert counter.count == 1


def test_revoked_key_is_401_and_other_keys_still_work(client, store, api_key):
    other_key = factories.make_key(store)
    assert client.get("/v1/invoices", headers=bearer(api_key)).status_code == 200
    with db.connection_context():
        assert api_keys.revoke(key_row(api_key).id, now=utcnow()) is True
    assert_error(client.get("/v1/invoices", headers=bearer(api_key)), 401, "invalid_api_key")
    assert_error(client.post("/v1/invoices", headers=bearer(api_key), json={"amount": "1.00"}),
                 401, "invalid_api_key")
    assert client.get("/v1/invoices", headers=bearer(other_key)).status_code == 200


def test_consumed_key_is_401(client, store):
    raw = factories.make_key(store, kind="bootstrap")
    ApiKey.update(consumed_at=utcnow()).where(ApiKey.id == key_row(raw).id).execute()
    assert_error(client.get("/v1/invoices", headers=bearer(raw)), 401, "invalid_api_key")


def test_bootstrap_key_expires_after_24_hours(client, store):
    issued = utcnow() - dt.timedelta(hours=24, seconds=1)
    raw = factories.make_key(store, kind="bootstrap", now=issued)
    assert key_row(raw).expires_at == issued + dt.timedelta(hours=24)
    assert_error(client.get("/v1/invoices", headers=bearer(raw)), 401, "invalid_api_key")


def test_bootstrap_key_has_no_invoice_scopes(client, store):
    invoice = factories.make_invoice(store)
    auth = bearer(factories.make_key(store, kind="bootstrap"))
    assert_legacy_error(client.post("/v1/invoices", headers=auth, json={"amount": "1.00"}), 403, "INSUFFICIENT_SCOPE")
    for method, path in (("get", "/v1/invoices"), ("get", f"/v1/invoices/{invoice.public_id}"),
                         ("get", f"/v1/invoices/{invoice.public_id}/status"),
                         ("post", f"/v1/invoices/{invoice.public_id}/cancel"), ("get", "/v1/transactions")):
        assert_error(getattr(client, method)(path, headers=auth), 403, "INSUFFICIENT_SCOPE")


def test_read_only_key_cannot_create_legacy_shape_and_cannot_read_transactions(client, store):
    auth = bearer(factories.make_key(store, scopes=["invoices:read"]))
    body = assert_legacy_error(client.post("/v1/invoices", headers=auth, json={"amount": "1.00"}),
                               403, "INSUFFICIENT_SCOPE")
    assert "invoices:write" in body["error"]
    assert_error(client.get("/v1/transactions", headers=auth), 403, "INSUFFICIENT_SCOPE")
    assert client.get("/v1/invoices", headers=auth).status_code == 200


def test_scope_is_checked_before_the_body(client, store):
    auth = bearer(factories.make_key(store, scopes=["invoices:read"]))
    response = client.post("/v1/invoices", headers=auth, data=b"{not json", content_type="application/json")
    assert_legacy_error(response, 403, "INSUFFICIENT_SCOPE")


def test_payments_read_stored_in_the_database_grants_nothing(client, store):
    invoice = factories.make_invoice(store)
    raw = factories.make_key(store, scopes=["invoices:read"])
    ApiKey.update(scopes="payments:read").where(ApiKey.id == key_row(raw).id).execute()
    for path in ("/v1/transactions", "/v1/invoices", f"/v1/invoices/{invoice.public_id}/transactions"):
        assert_error(client.get(path, headers=bearer(raw)), 403, "INSUFFICIENT_SCOPE")


def test_issuing_a_key_with_an_unknown_scope_is_refused(app, store):
    with db.connection_context():
        for scopes in (["payments:read"], ["invoices:read", "invoices:admin"]):
            with pytest.raises(DomainError) as raised:
                api_keys.issue_key(store, kind="standard", scopes=scopes, now=utcnow())
            assert raised.value.code == "validation_error" and raised.value.param == "scopes"
    assert ApiKey.select().count() == 0


def test_integration_key_creates_and_reads_but_never_cancels(client, store):
    auth = bearer(factories.make_key(store, kind="integration"))
    created = client.post("/v1/invoices", headers=auth, json={"amount": "1.00", "external_order_id": "wc-7"})
    assert created.status_code == 201
    invoice_id = created.get_json()["id"]
    assert client.get(f"/v1/invoices/{invoice_id}", headers=auth).status_code == 200
    assert client.get("/v1/transactions", headers=auth).status_code == 200
    assert_error(client.post(f"/v1/invoices/{invoice_id}/cancel", headers=auth), 403, "integration_key_forbidden")


def test_a_key_only_sees_its_own_store(client, store, other_auth):
    invoice = factories.make_invoice(store)
    assert client.get("/v1/invoices", headers=other_auth).get_json()["data"] == []
    assert_error(client.get(f"/v1/invoices/{invoice.public_id}", headers=other_auth), 404, "invoice_not_found")
