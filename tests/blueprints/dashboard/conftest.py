import pytest
from argon2 import PasswordHasher


@pytest.fixture(autouse=True)
def quick_password_hashes(monkeypatch):
    """argon2id at its smallest cost: the tests sign in often, and the cost is not what they test
    (tests/services/accounts/test_people.py holds the real parameters)."""
    from services.accounts import people

    monkeypatch.setattr(people, "_hasher", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
