"""The one after-commit hook (models/after_commit.py), on the test database (SQLite or PostgreSQL)."""
import pytest

from models.after_commit import on_commit
from models.base import db


@pytest.fixture
def ran(app):
    with db.connection_context():
        yield []


def test_outside_a_transaction_the_callback_runs_at_once(ran):
    on_commit(lambda: ran.append("now"))
    assert ran == ["now"]


def test_the_callback_waits_for_the_commit(ran):
    with db.atomic():
        on_commit(lambda: ran.append("committed"))
        assert ran == []
    assert ran == ["committed"]


def test_nested_atomic_waits_for_the_outermost_commit(ran):
    with db.atomic():
        with db.atomic():
            with db.atomic():
                on_commit(lambda: ran.append("inner"))
            assert ran == []
        assert ran == []
        on_commit(lambda: ran.append("outer"))
    assert ran == ["inner", "outer"]


def test_a_rollback_drops_the_callbacks(ran):
    with pytest.raises(RuntimeError):
        with db.atomic():
            on_commit(lambda: ran.append("dropped"))
            raise RuntimeError("roll back")
    assert ran == []
    with db.atomic():
        pass
    assert ran == []                   # not left over for the next transaction either


def test_a_rolled_back_savepoint_drops_only_its_own_callbacks(ran):
    with db.atomic():
        on_commit(lambda: ran.append("before"))
        with pytest.raises(RuntimeError):
            with db.atomic():
                on_commit(lambda: ran.append("in the savepoint"))
                with db.atomic():
                    on_commit(lambda: ran.append("in a nested savepoint"))
                raise RuntimeError("roll back the savepoint")
        with db.atomic():
            on_commit(lambda: ran.append("in a released savepoint"))
        on_commit(lambda: ran.append("after"))
    assert ran == ["before", "in a released savepoint", "after"]


def test_a_failing_callback_neither_undoes_the_commit_nor_stops_the_others(ran, caplog):
    def broken():
        raise ConnectionError("Redis is down")

    with db.atomic():
        on_commit(broken)
        on_commit(lambda: ran.append("still runs"))
    assert ran == ["still runs"]
    assert "after-commit callback" in caplog.text
    assert not db.in_transaction()
