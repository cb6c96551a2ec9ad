"""A connect whose response was lost is safe to retry (docs/retries.md): the same bootstrap key with the
same site_url within 15 minutes of its first use reconnects; any other reuse stays refused."""
import datetime as dt

from models.base import db
from models.stores import ApiKey
from models.webhooks import WebhookEndpoint
from tests.blueprints.assertions import assert_error
from tests.services.integrations.conftest import HOOK, SITE, bearer, connect, route


def spend_minutes_ago(minutes: float) -> None:
    with db.connection_context():
        consumed = ApiKey.get(ApiKey.kind == "bootstrap").consumed_at
        ApiKey.update(consumed_at=consumed - dt.timedelta(minutes=minutes)).where(ApiKey.kind == "bootstrap").execute()


def test_a_retried_connect_reconnects_and_revokes_the_unseen_credentials(client, store, bootstrap_auth):
    lost = connect(client, bootstrap_auth)                    # the plugin never saw this answer
    spend_minutes_ago(14)
    retry = connect(client, bootstrap_auth, site_url=SITE + "/")    # the same site, however it is written
    assert retry["credentials_rotated"] is True
    assert retry["integration_public_id"] == lost["integration_public_id"]
    assert (retry["api_key"], retry["webhook_secret"]) != (lost["api_key"], lost["webhook_secret"])
    assert_error(client.get(route("status"), headers=bearer(lost["api_key"])), 401, "invalid_api_key")
    assert client.get(route("status"), headers=bearer(retry["api_key"])).status_code == 200
    with db.connection_context():
        endpoint = WebhookEndpoint.get()
        assert (endpoint.secret, endpoint.previous_secret) == (retry["webhook_secret"], None)   # unseen: gone at once
    # The spent bootstrap key still opens nothing but connect.
    assert_error(client.get(route("status"), headers=bootstrap_auth), 401, "invalid_api_key")


def test_a_spent_key_for_another_site_is_refused(client, store, bootstrap_auth):
    connect(client, bootstrap_auth)
    response = client.post(route("connect"), json={"site_url": "https://other.example.com", "webhook_url": HOOK},
                           headers=bootstrap_auth)
    assert_error(response, 401, "invalid_api_key")


def test_a_spent_key_after_fifteen_minutes_is_refused(client, store, bootstrap_auth):
    first = connect(client, bootstrap_auth)
    spend_minutes_ago(15.1)
    response = client.post(route("connect"), json={"site_url": SITE, "webhook_url": HOOK}, headers=bootstrap_auth)
    assert_error(response, 401, "invalid_api_key")
    assert client.get(route("status"), headers=bearer(first["api_key"])).status_code == 200   # nothing changed
