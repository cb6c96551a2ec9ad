"""Connect, reconnect, disconnect and status (spec: Integration; docs/api.md#authentication-and-scopes), on the legacy error shape."""
import datetime as dt
import re

import pytest

from core.clock import utcnow
from models.base import db
from models.integrations import Integration
from models.stores import ApiKey
from models.webhooks import WebhookEndpoint
from tests import factories
from tests.blueprints.assertions import assert_error, assert_legacy_error
from tests.services.integrations.conftest import HOOK, SITE, bearer, connect, route

CONNECT_FIELDS = {
    "store_id", "store_name", "integration_id", "installation_id", "integration_public_id", "site_url", "api_key",
    "webhook_secret", "webhook_url", "webhook_id", "webhook_endpoint_id", "status", "credentials_rotated",
    "payout_configured", "checkout_base_url",
}
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def test_first_connect_returns_every_field_and_consumes_the_bootstrap_key(client, store, bootstrap_auth):
    body = connect(client, bootstrap_auth, plugin_version="1.2.0", cms_version="6.5", woocommerce_version="8.9")
    assert set(body) == CONNECT_FIELDS                 # payout wallet set: no warning
    assert body["store_id"] == str(store.id) and body["store_name"] == "Test shop"
    assert UUID.match(body["integration_id"]) and UUID.match(body["webhook_id"])
    assert re.fullmatch(r"int_[0-9a-f]{32}", body["integration_public_id"])
    assert re.fullmatch(r"inst_[0-9a-f]{32}", body["installation_id"])
    assert re.fullmatch(r"sk_live_[0-9a-f]{40}", body["api_key"])
    assert re.fullmatch(r"[0-9a-f]{64}", body["webhook_secret"])
    assert re.fullmatch(r"wh_[0-9a-f]{32}", body["webhook_endpoint_id"])
    assert body["site_url"] == SITE and body["webhook_url"] == HOOK
    assert body["status"] == "ACTIVE" and body["credentials_rotated"] is False
    assert body["payout_configured"] is True and body["checkout_base_url"] == "http://tender.test"
    # The bootstrap key served its one connect.
    assert_error(client.get(route("status"), headers=bootstrap_auth), 401, "invalid_api_key")
    with db.connection_context():
        integration = Integration.get()
        assert (integration.plugin_version, integration.cms_version, integration.platform_version) == (
            "1.2.0", "6.5", "8.9")
        assert ApiKey.get(ApiKey.kind == "bootstrap").consumed_at is not None
        key = ApiKey.get(ApiKey.kind == "integration")
        assert key.scope_set == {"invoices:create", "invoices:read", "transactions:read", "refunds:write",
                                 "refunds:read", "woocommerce:connect", "woocommerce:status", "woocommerce:disconnect"}
        endpoint = WebhookEndpoint.get()
        assert str(endpoint.id) == body["webhook_id"] and endpoint.public_id == body["webhook_endpoint_id"]
        assert endpoint.url == HOOK and endpoint.events == ["*"] and endpoint.secret == body["webhook_secret"]


def test_the_endpoint_is_listed_for_the_merchant(client, auth, bootstrap_auth):
    body = connect(client, bootstrap_auth)
    listed = client.get("/v1/webhook-endpoints", headers=auth).get_json()["data"]
    assert [(e["id"], e["url"], e["events"]) for e in listed] == [(body["webhook_endpoint_id"], HOOK, ["*"])]
    assert "secret" not in listed[0]


def test_without_a_payout_wallet_connect_warns(client):
    store = factories.make_store(payout_wallet=None)
    body = connect(client, bearer(factories.make_key(store, kind="bootstrap")))
    assert body["payout_configured"] is False and "payout wallet" in body["warning"]
    status = client.get(route("status"), headers=bearer(body["api_key"])).get_json()
    assert status["payout_configured"] is False


def test_reconnect_rotates_credentials_and_revokes_the_old_key_at_once(client, store, bootstrap_auth):
    first = connect(client, bootstrap_auth)
    old = bearer(first["api_key"])
    second = connect(client, old, webhook_url="https://shop.example.com/tender-hook", plugin_version="1.3.0")
    assert second["credentials_rotated"] is True
    assert second["api_key"] != first["api_key"] and second["webhook_secret"] != first["webhook_secret"]
    for same in ("integration_id", "integration_public_id", "installation_id", "webhook_id", "webhook_endpoint_id"):
        assert second[same] == first[same], same
    assert_error(client.get(route("status"), headers=old), 401, "invalid_api_key")
    assert_error(client.post("/v1/invoices", json={"amount": "5.00", "external_order_id": "1"}, headers=old),
                 401, "invalid_api_key")
    new = bearer(second["api_key"])
    created = client.post("/v1/invoices", json={"amount": "5.00", "external_order_id": "1"}, headers=new)
    assert created.status_code == 201, created.get_json()
    with db.connection_context():
        endpoint = WebhookEndpoint.get()               # the same endpoint, updated
        assert WebhookEndpoint.select().count() == 1
        assert endpoint.url == "https://shop.example.com/tender-hook" and endpoint.secret == second["webhook_secret"]
        assert endpoint.previous_secret == first["webhook_secret"]
        assert endpoint.previous_secret_expires_at > utcnow() + dt.timedelta(hours=23)
        assert Integration.get().plugin_version == "1.3.0"


def test_a_fresh_bootstrap_key_also_reconnects_the_same_site(client, store, bootstrap_auth):
    first = connect(client, bootstrap_auth)
    second = connect(client, bearer(factories.make_key(store, kind="bootstrap")), site_url="https://SHOP.example.com/")
    assert second["credentials_rotated"] is True and second["installation_id"] == first["installation_id"]
    assert_error(client.get(route("status"), headers=bearer(first["api_key"])), 401, "invalid_api_key")


def test_another_site_while_one_is_active_is_a_conflict(client, store, bootstrap_auth):
    first = connect(client, bootstrap_auth)
    other = bearer(factories.make_key(store, kind="bootstrap"))
    error = assert_legacy_error(client.post(route("connect"), json={"site_url": "https://other.example.com",
                                                                     "webhook_url": HOOK}, headers=other),
                                409, "INTEGRATION_SITE_CONFLICT")
    assert error["details"]["site_url"] == SITE
    assert error["details"]["integration_public_id"] == first["integration_public_id"]
    # The refused connect did not consume the bootstrap key, nor touch the installation.
    assert client.get(route("status"), headers=other).get_json()["site_url"] == SITE
    assert client.get(route("status"), headers=bearer(first["api_key"])).status_code == 200


def test_disconnect_then_another_site_is_a_new_installation(client, store, bootstrap_auth):
    first = connect(client, bootstrap_auth)
    assert client.post(route("disconnect"), headers=bearer(first["api_key"])).get_json() == {"disconnected": True}
    second = connect(client, bearer(factories.make_key(store, kind="bootstrap")), site_url="https://new.example.com")
    assert second["credentials_rotated"] is False
    assert second["installation_id"] != first["installation_id"]
    assert second["integration_public_id"] != first["integration_public_id"]
    assert second["webhook_id"] != first["webhook_id"]


def test_disconnect_revokes_the_key_and_removes_the_endpoint(client, store, bootstrap_auth):
    body = connect(client, bootstrap_auth)
    dedicated = bearer(body["api_key"])
    response = client.post(route("disconnect"), headers=dedicated)
    assert response.status_code == 200 and response.get_json() == {"disconnected": True}
    assert_error(client.post(route("disconnect"), headers=dedicated), 401, "invalid_api_key")
    with db.connection_context():
        assert WebhookEndpoint.select().count() == 0          # no slot held by a dead installation
        assert ApiKey.get(ApiKey.kind == "integration").revoked_at is not None
    status = client.get(route("status"), headers=bearer(factories.make_key(store, kind="bootstrap"))).get_json()
    assert status["status"] == "DISCONNECTED" and status["connected"] is False
    assert status["integration_public_id"] == body["integration_public_id"] and status["disconnected_at"]
    # Reconnecting the same site brings the same installation back, with a new endpoint.
    again = connect(client, bearer(factories.make_key(store, kind="bootstrap")))
    assert again["credentials_rotated"] is True
    assert again["integration_public_id"] == body["integration_public_id"]
    assert again["webhook_endpoint_id"] != body["webhook_endpoint_id"]
    with db.connection_context():
        endpoint = WebhookEndpoint.get()
        assert endpoint.enabled is True and endpoint.url == HOOK


def test_disconnect_when_not_connected_is_404(client, store):
    key = bearer(factories.make_key(store, kind="integration"))
    assert_legacy_error(client.post(route("disconnect"), headers=key), 404, "integration_not_found")


def test_status_values(client, store, bootstrap_auth):
    status = client.get(route("status"), headers=bootstrap_auth)
    assert status.status_code == 200
    body = status.get_json()
    assert body["status"] == "NOT_CONNECTED" and body["integration_public_id"] is None
    assert body["payout_configured"] is True and body["store_id"] == str(store.id)
    connected = connect(client, bearer(factories.make_key(store, kind="bootstrap")))
    body = client.get(route("status"), headers=bearer(connected["api_key"])).get_json()
    assert body["status"] == "ACTIVE" and body["connected"] is True
    assert body["integration_public_id"] == connected["integration_public_id"]
    assert body["installation_id"] == connected["installation_id"] and body["site_url"] == SITE
    assert "api_key" not in body and "webhook_secret" not in body
    assert body["supported_currencies"] == ["USD", "EUR", "JPY", "KWD"]     # the tests' SUPPORTED_CURRENCIES


def test_an_expired_bootstrap_key_is_401(client, store):
    old = factories.make_key(store, kind="bootstrap", now=utcnow() - dt.timedelta(hours=24, seconds=1))
    response = client.post(route("connect"), json={"site_url": SITE, "webhook_url": HOOK}, headers=bearer(old))
    assert_error(response, 401, "invalid_api_key")


def test_two_racing_connects_with_one_bootstrap_key(client, store, bootstrap_auth, app):
    """Only one connect can consume the key; the others, for the same site within minutes, are
    retries of it (docs/retries.md): each reconnects, and one installation with one live key is left."""
    from concurrent.futures import ThreadPoolExecutor

    def attempt(_):
        with app.test_client() as own:
            return own.post(route("connect"), json={"site_url": SITE, "webhook_url": HOOK},
                            headers=bootstrap_auth).status_code

    with ThreadPoolExecutor(4) as pool:
        codes = sorted(pool.map(attempt, range(4)))
    assert codes == [200] * 4, codes
    with db.connection_context():
        assert Integration.select().count() == 1
        assert ApiKey.select().where(ApiKey.kind == "integration", ApiKey.revoked_at.is_null()).count() == 1


# Every bad input on the three routes: the legacy shape (401 standard), never a 500.
@pytest.mark.parametrize("body, status, code, param", [
    ({"webhook_url": HOOK}, 422, "validation_error", "site_url"),
    ({"site_url": SITE}, 422, "validation_error", "webhook_url"),
    ({"site_url": SITE, "webhook_url": HOOK, "shop": "x"}, 422, "validation_error", "shop"),
    ({"site_url": "ftp://shop.example.com", "webhook_url": HOOK}, 422, "validation_error", "site_url"),
    ({"site_url": "not a url", "webhook_url": HOOK}, 422, "validation_error", "site_url"),
    ({"site_url": SITE, "webhook_url": 17}, 422, "validation_error", "webhook_url"),
    ({"site_url": SITE, "webhook_url": "ftp://shop.example.com/h"}, 422, "invalid_webhook_url", "webhook_url"),
    ({"site_url": SITE, "webhook_url": HOOK, "plugin_version": "x" * 65}, 422, "validation_error",
     "plugin_version"),
])
def test_bad_connect_bodies(client, bootstrap_auth, body, status, code, param):
    assert_legacy_error(client.post(route("connect"), json=body, headers=bootstrap_auth), status, code, param=param)


def test_invalid_json_is_400_legacy(client, bootstrap_auth):
    response = client.post(route("connect"), data=b"{nope", headers={**bootstrap_auth,
                                                                     "Content-Type": "application/json"})
    assert_legacy_error(response, 400, "invalid_json")
    assert_legacy_error(client.post(route("connect"), json=[1], headers=bootstrap_auth), 400, "invalid_json")


def test_webhook_url_must_be_https_and_public_unless_allowed(client, bootstrap_auth, app, settings):
    import dataclasses

    strict = dataclasses.replace(settings, allow_private_webhook_urls=False)
    app.extensions["tender.settings"] = strict
    try:
        for url in ("http://shop.example.com/hook", "https://127.0.0.1/hook", "https://10.0.0.5/hook",
                    "https://[::1]/hook", "https://169.254.169.254/latest"):
            assert_legacy_error(client.post(route("connect"), json={"site_url": SITE, "webhook_url": url},
                                            headers=bootstrap_auth), 422, "invalid_webhook_url", param="webhook_url")
    finally:
        app.extensions["tender.settings"] = settings
    # With ALLOW_PRIVATE_WEBHOOK_URLS (the tests' setting) a local http receiver is accepted.
    assert connect(client, bootstrap_auth, webhook_url="http://127.0.0.1:9/hook")["webhook_url"] == \
        "http://127.0.0.1:9/hook"


def test_scopes_and_keys_on_each_route(client, store, auth, bootstrap_auth):
    # A standard key holds no woocommerce scope.
    for method, action in (("post", "connect"), ("post", "disconnect"), ("get", "status")):
        response = getattr(client, method)(route(action), json={"site_url": SITE, "webhook_url": HOOK}
                                           if action == "connect" else None, headers=auth)
        assert_legacy_error(response, 403, "INSUFFICIENT_SCOPE")
    # A bootstrap key cannot disconnect; nothing at all is 401 in the standard shape.
    assert_legacy_error(client.post(route("disconnect"), headers=bootstrap_auth), 403, "INSUFFICIENT_SCOPE")
    assert_error(client.post(route("connect"), json={}), 401, "missing_api_key")
    assert_error(client.get(route("status"), headers=bearer("sk_live_" + "0" * 40)), 401, "invalid_api_key")
    # A dedicated key cannot reach merchant routes it has no scope for.
    body = connect(client, bootstrap_auth)
    assert_error(client.get("/v1/webhook-endpoints", headers=bearer(body["api_key"])), 403, "INSUFFICIENT_SCOPE")


def test_unknown_platform_and_wrong_method(client, bootstrap_auth):
    assert_error(client.post("/v1/integration/shopify/connect", json={}, headers=bootstrap_auth), 404,
                 "route_not_found")
    response = client.get(route("connect"), headers=bootstrap_auth)
    assert response.status_code == 405 and response.is_json


def test_a_malformed_disconnect_body_is_400_legacy(client, bootstrap_auth):
    body = connect(client, bootstrap_auth)
    response = client.post(route("disconnect"), data=b"{", headers={**bearer(body["api_key"]),
                                                                    "Content-Type": "application/json"})
    assert_legacy_error(response, 400, "invalid_json")


def test_the_installation_endpoint_changes_only_through_the_plugin(client, auth, bootstrap_auth):
    body = connect(client, bootstrap_auth)
    endpoint = f"/v1/webhook-endpoints/{body['webhook_endpoint_id']}"
    assert_error(client.patch(endpoint, json={"url": "https://evil.example.com/h"}, headers=auth), 422,
                 "validation_error")
    assert_error(client.post(f"{endpoint}/rotate-secret", headers=auth), 400, "validation_error")
    assert_error(client.delete(endpoint, headers=auth), 400, "validation_error")
    with db.connection_context():
        row = WebhookEndpoint.get()
        assert row.url == HOOK and row.secret == body["webhook_secret"]
    assert client.get(endpoint, headers=auth).status_code == 200


def test_only_a_dedicated_integration_key_disconnects(client, store, bootstrap_auth):
    """A standard key that holds woocommerce:disconnect (issued before the CLI refused it) is
    refused: the scope counts only on the key kind it belongs to."""
    body = connect(client, bootstrap_auth)
    raw = factories.make_key(store)
    with db.connection_context():
        standard = ApiKey.get(ApiKey.kind == "standard")
        ApiKey.update(scopes=standard.scopes + " woocommerce:disconnect woocommerce:status").where(
            ApiKey.id == standard.id).execute()
    refused = client.post(route("disconnect"), headers=bearer(raw))
    assert_legacy_error(refused, 403, "INSUFFICIENT_SCOPE")
    assert "dedicated integration keys" in refused.get_json()["error"]
    assert client.get(route("status"), headers=bearer(raw)).status_code == 403
    assert client.get(route("status"), headers=bearer(body["api_key"])).get_json()["status"] == "ACTIVE"
    assert client.post(route("disconnect"), headers=bearer(body["api_key"])).get_json() == {"disconnected": True}
