"""Shared fixtures: a store with a payout wallet, its standard key, and request headers."""
import pytest

from tests import factories


@pytest.fixture
def store(app):
    return factories.make_store()


@pytest.fixture
def api_key(store):
    return factories.make_key(store)


@pytest.fixture
def auth(api_key):
    return {"Authorization": f"Bearer {api_key}"}


@pytest.fixture
def other_store(app):
    return factories.make_store(name="Other shop")


@pytest.fixture
def other_auth(other_store):
    return {"Authorization": f"Bearer {factories.make_key(other_store)}"}


@pytest.fixture
def operator_app(app, settings, monkeypatch):
    """The app with operator credentials ops / s3cret (tests.support.prometheus.OPERATOR)."""
    import dataclasses

    monkeypatch.setitem(app.extensions, "tender.settings", dataclasses.replace(
        settings, operator_username="ops", operator_password="s3cret"))


@pytest.fixture
def unreachable_redis():
    """A client for a port where no Redis listens, built as infra.queues.connect builds its
    (from a URL: it fails at once; redis-py's plain constructor would retry for seconds)."""
    import redis as redis_lib

    return redis_lib.Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.2)


@pytest.fixture
def fee_of_100_bps(app, monkeypatch):
    """The operator takes 100 bps of every payment (docs/operations.md#the-operators-fee)."""
    import dataclasses

    monkeypatch.setitem(app.extensions, "tender.settings", dataclasses.replace(
        app.extensions["tender.settings"], operator_fee_bps=100, operator_fee_account="tender-fees.near"))
