"""A connect whose response was lost is safe to retry (docs/retries.md): the same bootstrap key with the
same site_url and webhook_url within 15 minutes of its first use reconnects, until the credentials it
issued are first used or the store disconnects; any other reuse stays refused."""
import datetime as dt

import pytest

from models.base import db
from models.integrations import Integration
from models.stores import ApiKey
from models.webhooks import WebhookEndpoint
from tests import factories
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


def retry(client, bootstrap_auth, **body):
    return client.post(route("connect"), json={"site_url": SITE, "webhook_url": HOOK, **body}, headers=bootstrap_auth)


def test_the_retry_ends_at_the_first_call_made_with_the_issued_key(client, store, bootstrap_auth):
    seen = connect(client, bootstrap_auth)
    assert client.get(route("status"), headers=bearer(seen["api_key"])).status_code == 200   # the plugin has it
    assert_error(retry(client, bootstrap_auth), 401, "invalid_api_key")
    assert_error(retry(client, bootstrap_auth), 401, "invalid_api_key")                   # and stays spent
    # Nothing was rotated: the plugin's credentials still work.
    assert client.get(route("status"), headers=bearer(seen["api_key"])).get_json()["status"] == "ACTIVE"
    with db.connection_context():
        assert WebhookEndpoint.get().secret == seen["webhook_secret"]


def test_the_retry_ends_at_the_first_call_made_with_a_retried_connects_key(client, store, bootstrap_auth):
    connect(client, bootstrap_auth)
    second = connect(client, bootstrap_auth)                       # a retry: allowed, the first answer unseen
    assert client.post(route("disconnect"), headers=bearer(second["api_key"])).status_code == 200
    assert_error(retry(client, bootstrap_auth), 401, "invalid_api_key")


def test_the_retry_ends_at_disconnect(client, store, bootstrap_auth):
    connect(client, bootstrap_auth)
    operator_key = bearer(factories.make_key(store, kind="integration"))    # the merchant disconnects by hand
    assert client.post(route("disconnect"), headers=operator_key).get_json() == {"disconnected": True}
    assert_error(retry(client, bootstrap_auth), 401, "invalid_api_key")
    assert client.get(route("status"), headers=operator_key).get_json()["status"] == "DISCONNECTED"


def test_the_retry_repeats_only_the_same_webhook_url(client, store, bootstrap_auth):
    first = connect(client, bootstrap_auth)
    other_hook = "https://shop.example.com/?wc-api=attacker"
    assert_error(retry(client, bootstrap_auth, webhook_url=other_hook), 401, "invalid_api_key")
    with db.connection_context():
        assert WebhookEndpoint.get().url == HOOK
    assert client.get(route("status"), headers=bearer(first["api_key"])).status_code == 200


def test_the_retry_ends_after_a_reconnect_by_the_integration_key(client, store, bootstrap_auth):
    first = connect(client, bootstrap_auth)
    rotated = connect(client, bearer(first["api_key"]))            # the plugin rotates its own credentials
    assert_error(retry(client, bootstrap_auth), 401, "invalid_api_key")
    assert client.get(route("status"), headers=bearer(rotated["api_key"])).status_code == 200


def test_a_first_use_racing_a_retry_leaves_exactly_one_of_them_standing(app, store):
    """The key's first use and the retry decide on one row: either the plugin's call goes through
    and the retry is 401, or the retry rotates and the plugin's call is 401; never both through."""
    import threading

    from models.base import is_postgres

    if not is_postgres():
        pytest.skip("needs real concurrent connections: set TEST_DATABASE_URL to PostgreSQL")
    for _ in range(5):
        bootstrap_auth = bearer(factories.make_key(store, kind="bootstrap"))
        with db.connection_context():
            Integration.update(status="disconnected").execute()     # each round a first connect
        issued = connect(app.test_client(), bootstrap_auth)
        barrier, results = threading.Barrier(2), {}

        def use():
            barrier.wait(timeout=30)
            results["use"] = app.test_client().get(route("status"), headers=bearer(issued["api_key"])).status_code

        def again():
            barrier.wait(timeout=30)
            results["retry"] = retry(app.test_client(), bootstrap_auth).status_code

        threads = [threading.Thread(target=use), threading.Thread(target=again)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert sorted(results.values()) == [200, 401], results
