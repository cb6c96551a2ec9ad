import pytest
from argon2 import PasswordHasher


@pytest.fixture(autouse=True)
def quick_password_hashes(monkeypatch):
    """argon2id at its smallest cost: the tests sign in often, and the cost is not what they test
    (tests/services/accounts/test_people.py holds the real parameters)."""
    from services.accounts import people

    monkeypatch.setattr(people, "_hasher", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))


SCRIPT = '<script>alert("x")</script>'         # what a merchant might type anywhere; never rendered as is


@pytest.fixture
def owner_client(client, store):
    """A test client signed in as the store's owner."""
    from tests.support.dashboard import make_member, sign_in

    make_member(store, "owner@example.com", "owner")
    sign_in(client, "owner@example.com")
    return client
