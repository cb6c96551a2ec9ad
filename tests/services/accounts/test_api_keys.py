"""Key lookups are cached per process for at most a second (services/accounts/api_keys.py)."""
from core.clock import utcnow
from models.base import db
from models.stores import ApiKey
from services.accounts import api_keys
from tests import factories
from tests.support.polling import wait_for


def test_a_key_revoked_by_another_process_stops_working_within_a_second(app, store):
    raw = factories.make_key(store)
    with db.connection_context():
        assert api_keys.authenticate(raw, now=utcnow()) is not None          # now in this process's cache
        # Another process revokes it: only the database changes, this process's cache does not know.
        ApiKey.update(revoked_at=utcnow()).where(ApiKey.digest == api_keys.digest(raw)).execute()
        # Within the cache's second (the slack is for a busy machine's scheduling, not the cache).
        wait_for(lambda: api_keys.authenticate(raw, now=utcnow()) is None, timeout=api_keys.KEY_CACHE_SECONDS + 0.5,
                 interval=0.02, what="the revoked key refused")


def test_this_process_forgets_at_once_and_each_request_gets_its_own_objects(client, store, auth):
    assert client.get("/v1/invoices", headers=auth).status_code == 200
    raw = auth["Authorization"].split()[1]
    with db.connection_context():
        first = api_keys.authenticate(raw, now=utcnow())
        second = api_keys.authenticate(raw, now=utcnow())
        assert first is not second and first.store is not second.store and first.id == second.id
        api_keys.revoke(first.id, now=utcnow())
    assert client.get("/v1/invoices", headers=auth).status_code == 401
