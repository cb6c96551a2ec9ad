"""Security (docs/security.md): what is stored, how keys are compared, store isolation on
every route, security headers, unknown scopes. The full-key-in-logs watch is tests/conftest.py."""
from __future__ import annotations

import datetime as dt
import hmac
import json
import re

from flask import Flask
import pytest

from blueprints import register_blueprints
from core.clock import utcnow
from models.base import db
from models.stores import ApiKey
from services.webhooks import outbox
from tests import factories

RAW_KEY = re.compile(r"sk_live_[0-9a-f]{40}")


def _routes():
    """Every route of the app, read from a bare Flask app with the same blueprints (no database
    needed at collection time), with the scopes its view requires (None: no API key)."""
    bare = Flask("routes", static_folder=None)
    register_blueprints(bare)
    for rule in sorted(bare.url_map.iter_rules(), key=lambda r: r.rule):
        scopes = getattr(bare.view_functions[rule.endpoint], "required_scopes", None)
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            yield method, rule.rule, scopes


ROUTES = list(_routes())
KEYED_ROUTES = [(method, rule) for method, rule, scopes in ROUTES if scopes is not None]


def _path(rule: str, ids: dict) -> str:
    return re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", lambda m: ids[m.group(1)], rule)


def _call(client, method, path, headers):
    body = {} if method in ("POST", "PATCH", "PUT") else None
    return client.open(path, method=method, headers=headers, json=body)


@pytest.fixture
def store_a_objects(client, store, auth):
    """One object of every kind in store A, made through the real routes where a route makes it."""
    invoice = client.post("/v1/invoices", headers=auth, json={"amount": "12.00"}).get_json()
    link = client.post("/v1/payment-links", headers=auth, json={"title": "Mug", "amount_mode": "fixed_amount",
                                                               "amount": "9.00"}).get_json()
    endpoint = client.post("/v1/webhook-endpoints", headers=auth,
                           json={"url": "http://127.0.0.1:9/hook", "events": ["*"]}).get_json()
    second = client.post("/v1/invoices", headers=auth, json={"amount": "3.00"}).get_json()
    with db.connection_context():
        outbox.relay(now=utcnow(), grace=dt.timedelta(0))        # fan-out: the deliveries exist now
    deliveries = client.get(f"/v1/webhook-endpoints/{endpoint['id']}/deliveries", headers=auth).get_json()["data"]
    events = client.get("/v1/events", headers=auth).get_json()["data"]
    txn = factories.make_transaction(factories.make_invoice(store))
    refund = factories.make_refund(factories.make_invoice(store, status="paid"))
    assert deliveries and events and second["id"]
    return {"invoice_id": invoice["id"], "link_id": link["id"], "endpoint_id": endpoint["id"],
            "delivery_id": deliveries[0]["id"], "event_id": events[0]["id"], "transaction_id": txn.public_id,
            "transaction_hash": txn.transaction_hash, "refund_id": refund.public_id, "secret": endpoint["secret"]}


@pytest.mark.parametrize("method, rule", KEYED_ROUTES, ids=[f"{m} {r}" for m, r in KEYED_ROUTES])
def test_another_stores_ids_are_404_on_every_authenticated_route(client, store_a_objects, other_auth, auth,
                                                                 method, rule):
    path = _path(rule, store_a_objects)
    response = _call(client, method, path, other_auth)
    if "<" in rule:
        assert response.status_code == 404, (path, response.get_json())
        assert response.get_json()["error"]["code"].endswith("_not_found")
        # …and the owner still reaches it: the 404 was about the store, not the id.
        if method == "GET":
            assert client.get(path, headers=auth).status_code == 200
    else:
        # Routes without an id (lists, creates) show store B nothing of store A's.
        text = response.get_data(as_text=True)
        assert not any(value in text for key, value in store_a_objects.items() if key != "transaction_hash")


def test_the_isolation_walk_covers_every_route_kind():
    """A new authenticated route with a path id this test cannot fill would fail above with a KeyError;
    this names the id kinds it knows, so the failure points here."""
    names = {name for _m, rule in KEYED_ROUTES for name in re.findall(r"<(?:[^:<>]+:)?([^<>]+)>", rule)}
    assert names <= {"invoice_id", "link_id", "endpoint_id", "delivery_id", "event_id", "transaction_id",
                     "transaction_hash", "refund_id"}
    assert len(KEYED_ROUTES) >= 28


def _all_text(app) -> str:
    """Every text-like column of every table, as one string to search."""
    chunks = []
    with db.connection_context():
        for table in db.get_tables():
            cursor = db.execute_sql(f'SELECT * FROM "{table}"')
            for row in cursor.fetchall():
                chunks.extend(str(value) for value in row if value is not None)
    return "\n".join(chunks)


def test_no_raw_api_key_is_stored_anywhere(app, client, store, auth, store_a_objects):
    runner = app.test_cli_runner()
    created = json.loads(runner.invoke(args=["stores", "create", "--name", "Scan", "--json"]).output)
    issued = json.loads(runner.invoke(args=["keys", "create", "--store", created["store_id"], "--kind",
                                            "bootstrap", "--json"]).output)
    raw_keys = [auth["Authorization"].split()[1], created["api_key"], issued["api_key"]]
    # A request that echoes a key in its body must not get it stored either (metadata, order ids).
    client.post("/v1/invoices", headers=auth, json={"amount": "1.00", "external_order_id": "x",
                                                    "metadata": {"note": "ok"}})

    text = _all_text(app)

    assert len(text) > 1000                       # the scan saw real rows
    for raw in raw_keys:
        assert raw not in text
        assert raw[-4:] in text                   # …while the last four are kept for display
    assert not RAW_KEY.search(text)
    with db.connection_context():
        assert all(re.fullmatch(r"[0-9a-f]{64}", key.digest) for key in ApiKey.select())


def test_a_webhook_secret_is_shown_at_creation_and_rotation_only(client, auth, store_a_objects):
    endpoint_id, secret = store_a_objects["endpoint_id"], store_a_objects["secret"]
    assert secret.startswith("whsec_")
    reads = [client.get(f"/v1/webhook-endpoints/{endpoint_id}", headers=auth),
             client.get("/v1/webhook-endpoints", headers=auth),
             client.patch(f"/v1/webhook-endpoints/{endpoint_id}", headers=auth, json={"name": "renamed"}),
             client.get(f"/v1/webhook-endpoints/{endpoint_id}/deliveries", headers=auth),
             client.get(f"/v1/webhook-deliveries/{store_a_objects['delivery_id']}", headers=auth),
             client.get("/v1/events", headers=auth)]
    for response in reads:
        assert response.status_code == 200
        assert secret not in response.get_data(as_text=True)
        assert '"secret"' not in response.get_data(as_text=True)
    rotated = client.post(f"/v1/webhook-endpoints/{endpoint_id}/rotate-secret", headers=auth).get_json()
    assert rotated["secret"].startswith("whsec_") and rotated["secret"] != secret
    after = client.get(f"/v1/webhook-endpoints/{endpoint_id}", headers=auth).get_data(as_text=True)
    assert rotated["secret"] not in after


def test_key_digests_are_compared_in_constant_time(client, auth, monkeypatch):
    compared = []
    real = hmac.compare_digest

    def spy(a, b):
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    assert client.get("/v1/invoices", headers=auth).status_code == 200
    assert len(compared) == 1 and compared[0][0] == compared[0][1]
    assert all(len(side) == 64 for side in compared[0])         # digests, never the raw key


SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"}


@pytest.mark.parametrize("method, rule, scopes", ROUTES, ids=[f"{m} {r}" for m, r, _s in ROUTES])
def test_security_headers_on_every_route(client, auth, method, rule, scopes):
    ids = {"invoice_id": "inv_" + "0" * 32, "link_id": "plink_" + "0" * 32, "endpoint_id": "wh_" + "0" * 32,
           "delivery_id": "whd_" + "0" * 32, "event_id": "evt_" + "0" * 32, "transaction_id": "txn_" + "0" * 32,
           "transaction_hash": "0xabc", "token": "plpub_" + "0" * 32, "name": "swagger-ui.css",
           "filename": "tender.css", "refund_id": "ref_" + "0" * 32,
           # the dashboard's own path parts (its pages answer a redirect to sign in here)
           "key_id": "key_" + "0" * 32, "user_id": "0", "platform": "woocommerce", "kind": "invoices", "change": "enable"}
    for headers in (auth, {}):                       # answered and refused (401) alike
        response = _call(client, method, _path(rule, ids), headers)
        for name, value in SECURITY_HEADERS.items():
            assert response.headers.get(name) == value, (rule, name)
        assert "default-src 'none'" in response.headers["Content-Security-Policy"]
        assert "Strict-Transport-Security" not in response.headers       # PUBLIC_BASE_URL is http here


def test_security_headers_on_errors_the_router_answers(client):
    for response in (client.get("/nowhere"), client.put("/v1/invoices"), client.get("/docs")):
        assert response.headers["X-Frame-Options"] == "DENY"
        assert "Content-Security-Policy" in response.headers


def test_hsts_only_when_the_public_url_is_https(settings):
    import dataclasses

    from blueprints.security_headers import security_headers_for

    secure = security_headers_for(dataclasses.replace(settings, public_base_url="https://pay.example.com"))
    assert secure["Strict-Transport-Security"].startswith("max-age=")
    assert "Strict-Transport-Security" not in security_headers_for(settings)


@pytest.mark.parametrize("stored", ["payments:read", "payments:read invoices:admin", "*", ""])
def test_a_stored_unknown_scope_grants_nothing_on_any_route(client, store, stored):
    raw = factories.make_key(store, scopes=["invoices:read"])
    with db.connection_context():
        ApiKey.update(scopes=stored).where(ApiKey.last4 == raw[-4:]).execute()
    for method, rule in KEYED_ROUTES:
        path = _path(rule, {"invoice_id": "inv_" + "1" * 32, "link_id": "plink_" + "1" * 32,
                            "endpoint_id": "wh_" + "1" * 32, "delivery_id": "whd_" + "1" * 32,
                            "event_id": "evt_" + "1" * 32, "transaction_id": "txn_" + "1" * 32,
                            "refund_id": "ref_" + "1" * 32,
                            "transaction_hash": "0x1"})
        response = _call(client, method, path, {"Authorization": f"Bearer {raw}"})
        assert response.status_code == 403, (method, path)
        body = response.get_json()
        assert (body.get("code") or body["error"]["code"]) == "INSUFFICIENT_SCOPE"


@pytest.mark.parametrize("scopes", ["payments:read", "transactions:read,payments:read", "webhooks:*"])
def test_the_cli_refuses_unknown_scopes(app, store, scopes):
    result = app.test_cli_runner().invoke(args=["keys", "create", "--store", str(store.id), "--scopes", scopes])
    assert result.exit_code != 0 and "unknown scope" in result.output
    with db.connection_context():
        assert ApiKey.select().count() == 0
