"""models/selects.py: a SELECT compiled once returns what peewee's own query returns, for each new value."""
import pytest

from models.base import db
from models.selects import CompiledSelect
from models.stores import Store
from tests import factories


@pytest.fixture
def stores(app):
    return [factories.make_store(name="First shop"), factories.make_store(name="Second shop")]


def _by_name(name):
    return Store.select(Store.id, Store.name, Store.created_at).where(Store.name == name).dicts()


def test_each_run_reads_its_own_value_converted_like_peewee(stores, monkeypatch):
    compiled = CompiledSelect(_by_name, 1)
    with db.connection_context():
        first = compiled.run(db, stores[0].name)
        built = []
        monkeypatch.setattr(Store, "select", lambda *a, **k: built.append(a) or pytest.fail("compiled again"))
        second = compiled.run(db, stores[1].name)
        monkeypatch.undo()
        assert first == list(_by_name(stores[0].name)) and second == list(_by_name(stores[1].name))
    assert first[0]["id"] == stores[0].id and second[0]["id"] == stores[1].id and not built


def test_a_value_that_does_not_stand_alone_is_compiled_each_time(stores):
    twice = CompiledSelect(lambda name: Store.select(Store.id).where((Store.name == name) | (Store.name == name))
                           .dicts(), 1)
    with db.connection_context():
        assert [row["id"] for row in twice.run(db, stores[1].name)] == [stores[1].id]
        assert [row["id"] for row in twice.run(db, stores[0].name)] == [stores[0].id]
