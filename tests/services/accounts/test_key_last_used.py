"""When a key was last used: to the minute, at most one UPDATE a minute per key, and authentication
goes on when Redis is unreachable (services/accounts/api_keys.py, docs/decisions.md)."""
import datetime as dt

import pytest

from core.clock import utcnow
from infra import queues
from models.base import db
from models.stores import ApiKey
from services.accounts import api_keys
from tests import factories
from tests.support.queries import counting_queries


def _row(raw) -> ApiKey:
    with db.connection_context():
        return ApiKey.get(ApiKey.digest == api_keys.digest(raw))


def _as_another_process_read_it(raw) -> ApiKey:
    """The key as a process that read the row before this minute's write holds it (in its cache)."""
    key = _row(raw)
    key.last_used_at = None
    return key


def test_a_used_key_records_when(client, api_key, auth):
    assert _row(api_key).last_used_at is None
    before = utcnow()
    assert client.get("/v1/invoices", headers=auth).status_code == 200
    assert before <= _row(api_key).last_used_at <= utcnow()


def test_two_requests_within_a_minute_write_the_row_once(client, api_key, auth):
    with counting_queries() as queries:
        assert client.get("/v1/invoices", headers=auth).status_code == 200
        first = _row(api_key).last_used_at
        with db.connection_context():     # this process's cached copy knows the minute is recorded
            assert api_keys.authenticate(api_key, now=utcnow()).last_used_at == first
        api_keys.forget_cached_keys()        # the second request reads the row again, as another process would
        assert client.post("/v1/invoices", json={"amount": "1.00"}, headers=auth).status_code == 201
    assert queries.count("api_key", "update") == 1, queries.by_table()
    assert _row(api_key).last_used_at == first


def test_another_process_holding_the_old_row_does_not_write_again_within_the_minute(app, api_key):
    first = utcnow()
    with db.connection_context():
        api_keys.note_use(_row(api_key), now=first)
        api_keys.note_use(_as_another_process_read_it(api_key), now=first + dt.timedelta(seconds=30))
    assert _row(api_key).last_used_at == first
    gate = queues.redis().ttl("tender:api_key:last_used:" + _row(api_key).id)
    assert 0 < gate <= 60


def test_a_redis_that_lost_the_gate_costs_no_write_while_the_row_holds_the_minute(app, api_key):
    first = utcnow()
    key = _row(api_key)
    with db.connection_context():
        api_keys.note_use(key, now=first)
        queues.redis().delete("tender:api_key:last_used:" + key.id)       # a failover lost it
        with counting_queries() as queries:
            api_keys.note_use(_row(api_key), now=first + dt.timedelta(seconds=30))
    assert queries.count("api_key", "update") == 0
    assert _row(api_key).last_used_at == first


def test_the_next_minute_is_written_and_never_backwards(app, api_key):
    first = utcnow()
    key = _row(api_key)
    with db.connection_context():
        api_keys.note_use(key, now=first)
        queues.redis().delete("tender:api_key:last_used:" + key.id)       # the gate's minute is over
        api_keys.note_use(key, now=first + dt.timedelta(seconds=61))
        assert _row(api_key).last_used_at == first + dt.timedelta(seconds=61)
        queues.redis().delete("tender:api_key:last_used:" + key.id)
        # A process whose clock lags two minutes: its minute is not recorded over a later one.
        api_keys.note_use(_as_another_process_read_it(api_key), now=first - dt.timedelta(minutes=2))
    assert _row(api_key).last_used_at == first + dt.timedelta(seconds=61)


@pytest.fixture
def redis_down(monkeypatch, unreachable_redis):
    monkeypatch.setitem(queues._state, "redis", unreachable_redis)


def test_redis_unreachable_still_authenticates_and_records(client, api_key, auth, redis_down):
    before = utcnow()
    assert client.get("/v1/invoices", headers=auth).status_code == 200
    first = _row(api_key).last_used_at
    assert first is not None and first >= before
    with counting_queries() as queries, db.connection_context():
        # Another copy of the old row, Redis still down: this process's own gate holds the minute.
        api_keys.note_use(_as_another_process_read_it(api_key), now=first + dt.timedelta(seconds=30))
    assert queries.count("api_key", "update") == 0
    assert _row(api_key).last_used_at == first


def test_an_integration_keys_first_use_writes_both_times_in_one_update(client, store):
    raw = factories.make_key(store, kind="integration")
    with counting_queries() as queries:
        assert client.get("/v1/invoices", headers={"Authorization": f"Bearer {raw}"}).status_code == 200
    assert queries.count("api_key", "update") == 1, queries.by_table()
    key = _row(raw)
    assert key.last_used_at is not None and key.last_used_at == key.first_used_at
