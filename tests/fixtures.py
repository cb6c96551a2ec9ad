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
