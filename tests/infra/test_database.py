"""The database's differences (infra/database.py): each function gives the same answer on SQLite and
on PostgreSQL, run here on both in one test (PostgreSQL when TEST_DATABASE_URL is set; in a
schema of its own, so the suite's tables are not touched)."""
import csv
import datetime as dt
from decimal import Decimal
import io
from types import SimpleNamespace
import uuid

import peewee as pw
import pytest

from infra import database
from models.fields import AmountField
from tests.support.databases import postgres_in_schema

SCHEMA = "database_parity"


@pytest.fixture
def backends(tmp_path):
    """One connected database per backend, each with a table `amounts(n integer, amount <amount type>)`."""
    opened = [("sqlite", pw.SqliteDatabase(str(tmp_path / "parity.db")), "TEXT")]
    postgres = postgres_in_schema(SCHEMA)
    if postgres is not None:
        opened.append(("postgresql", postgres, "NUMERIC(36, 18)"))
    for _, handle, amount_type in opened:
        handle.connect(reuse_if_open=True)
        handle.execute_sql(f"CREATE TABLE amounts (n integer, amount {amount_type})")
    yield [(name, handle) for name, handle, _ in opened]
    for name, handle, _ in opened:
        if name == "postgresql":
            handle.execute_sql(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        handle.close()


def _fill(handle, rows):
    mark = handle.param
    for n, amount in rows:
        handle.execute_sql(f"INSERT INTO amounts (n, amount) VALUES ({mark}, {mark})", (n, amount))


def test_rows_stream_in_batches_alike(backends):
    for name, handle in backends:
        _fill(handle, [(n, str(n)) for n in range(7)])
        batches = list(database.stream_rows("SELECT n FROM amounts ORDER BY n", (), size=3, database=handle))
        assert [[row[0] for row in batch] for batch in batches] == [[0, 1, 2], [3, 4, 5], [6]], name
        handle.execute_sql("SELECT 1")     # the connection is usable after the streamed read


def test_exact_sums_alike(backends):
    amounts = ["0.1", "0.2", "1234567890.000000000000000001"]   # float would lose both
    for name, handle in backends:
        _fill(handle, enumerate(amounts))
        total = handle.execute_sql(f"SELECT {database.exact_sum(handle)}(amount) FROM amounts").fetchone()[0]
        assert Decimal(str(total)) == sum(map(Decimal, amounts)), name


def test_parsed_values_alike(backends):
    """A timestamp and a UUID read back raw, then through `value_parser`, are the values written."""
    when, key = dt.datetime(2026, 3, 1, 12, 30, 59), uuid.UUID("3f0c4a52-1b7e-4b2a-9c55-4d2f3c1e0a11")
    timestamp, identifier = pw.DateTimeField(), pw.UUIDField()
    for name, handle in backends:
        handle.execute_sql(f"CREATE TABLE stamped (at {_column_type(name, 'ts')}, "
                           f"key {_column_type(name, 'uuid')})")
        handle.execute_sql(f"INSERT INTO stamped (at, key) VALUES ({handle.param}, {handle.param})",
                           (timestamp.db_value(when), identifier.db_value(key)))
        [[(raw_at, raw_key)]] = database.stream_rows("SELECT at, key FROM stamped", (), size=10, database=handle)
        parse_at, parse_key = (database.value_parser(field, handle) for field in (timestamp, identifier))
        assert (parse_at(raw_at) if parse_at else raw_at) == when, name
        assert str(parse_key(raw_key) if parse_key else raw_key) == str(key), name


def _column_type(backend: str, kind: str) -> str:
    return {"ts": "TIMESTAMP", "uuid": "UUID"}[kind] if backend == "postgresql" else "TEXT"


def test_files_of_rows_alike(backends):
    """PostgreSQL's `COPY … WITH CSV` (`copy_out`) writes the same bytes as Python's csv writer, the
    way `file_chunks` takes on SQLite, on text that needs quoting."""
    notes = ["plain", "a,b", 'say "hi"', "two\nlines", "cr\rhere", None, "üñí €"]
    files = {}
    for name, handle in backends:
        handle.execute_sql("CREATE TABLE notes (n integer, note text)")
        for n, note in enumerate(notes):
            handle.execute_sql(f"INSERT INTO notes (n, note) VALUES ({handle.param}, {handle.param})", (n, note))
        query = SimpleNamespace(sql=lambda: ("SELECT n, note FROM notes ORDER BY n", []))

        def written_here(handle=handle, query=query):
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\r\n")
            for rows in database.stream_rows(*query.sql(), size=3, database=handle):
                writer.writerows(rows)
            return iter([buffer.getvalue().encode()])

        files[name] = b"".join(database.file_chunks(
            lambda handle=handle, query=query: database.copy_out(query, "CSV", lambda row: row[:-1] + b"\r\n",
                                                                 piece_bytes=16, database=handle),
            written_here, database=handle))
        handle.execute_sql("SELECT 1")     # the connection is usable after the file
    assert files["sqlite"].count(b"\r\n") >= len(notes)
    if "postgresql" in files:
        assert files["postgresql"] == files["sqlite"]


class _Tally(pw.Model):
    name = pw.CharField()
    day = pw.DateField()
    count = pw.IntegerField(default=0)
    amount = AmountField(default=0)

    class Meta:
        table_name = "tally"
        primary_key = pw.CompositeKey("name", "day")


def test_adding_to_a_row_alike(backends):
    """`add_to_row` creates the row at zero, then adds, exactly: amounts that float would round,
    negative ones that take back, beyond Decimal's default 28 digits; rows apart stay apart. On
    SQLite the amount stays text (a NUMERIC column would have turned it into float)."""
    day = dt.date(2026, 3, 10)
    additions = [("a", 1, "0.1"), ("a", 1, "0.2"), ("b", 1, "5"), ("a", 1, "123456789012345678.000000000000000001"),
                 ("a", -1, "-0.3")]
    for name, handle in backends:
        amount_type = "NUMERIC(36, 18)" if name == "postgresql" else "TEXT"
        handle.execute_sql(f"CREATE TABLE tally (name text, day date, count integer NOT NULL DEFAULT 0, "
                           f"amount {amount_type} NOT NULL DEFAULT 0, PRIMARY KEY (name, day))")
        for key, count, amount in additions:
            database.add_to_row(_Tally, {"name": key, "day": day}, {"count": count, "amount": Decimal(amount)},
                                database=handle)
        database.add_to_row(_Tally, {"name": "b", "day": day}, {"count": 1}, database=handle)
        with handle.bind_ctx([_Tally]):
            rows = {row.name: (row.count, row.amount) for row in _Tally.select()}
        assert rows == {"a": (2, Decimal("123456789012345678.000000000000000001")), "b": (2, Decimal(5))}, name
        if name == "sqlite":
            assert handle.execute_sql("SELECT DISTINCT typeof(amount) FROM tally").fetchall() == [("text",)]


def test_adding_to_a_row_from_every_thread_alike(backends):
    """Threads with connections of their own, opened before any addition (a threaded web worker),
    add as well as the first one: SQLite's `decimal_add` reaches every connection."""
    import threading

    day = dt.date(2026, 3, 10)
    for name, handle in backends:
        amount_type = "NUMERIC(36, 18)" if name == "postgresql" else "TEXT"
        handle.execute_sql(f"CREATE TABLE tally (name text, day date, count integer NOT NULL DEFAULT 0, "
                           f"amount {amount_type} NOT NULL DEFAULT 0, PRIMARY KEY (name, day))")
        opened, added, failures = threading.Event(), threading.Event(), []

        def other_thread():
            try:
                handle.connect(reuse_if_open=True)
                opened.set()
                added.wait(5)
                database.add_to_row(_Tally, {"name": "a", "day": day}, {"amount": Decimal("0.2")}, database=handle)
            except Exception as error:          # reported below, in the test's thread
                failures.append(error)
            finally:
                handle.close()

        worker = threading.Thread(target=other_thread)
        worker.start()
        opened.wait(5)
        database.add_to_row(_Tally, {"name": "a", "day": day}, {"amount": Decimal("0.1")}, database=handle)
        added.set()
        worker.join(10)
        assert failures == [], name
        with handle.bind_ctx([_Tally]):
            assert _Tally.get().amount == Decimal("0.3"), name


class _Amounts(pw.Model):
    n = pw.IntegerField()

    class Meta:
        table_name = "amounts"
        primary_key = False


def test_a_sole_writer_holds_back_other_writers_alike(backends):
    """Inside `sole_writer_of`, another connection cannot write to the table (it would wait: here
    it gives up at once) but still reads it; once the transaction ends it writes."""
    for name, handle in backends:
        _fill(handle, [(1, "1")])
        if name == "postgresql":
            other = type(handle)(handle.database, **handle.connect_params)
            other.execute_sql("SET lock_timeout = '200ms'")
        else:
            other = pw.SqliteDatabase(handle.database, timeout=0.05)
        with database.sole_writer_of(_Amounts, database=handle):
            handle.execute_sql(f"INSERT INTO amounts (n, amount) VALUES (2, {handle.param})", ("2",))
            with pytest.raises(pw.OperationalError):
                other.execute_sql(f"INSERT INTO amounts (n, amount) VALUES (3, {other.param})", ("3",))
            assert other.execute_sql("SELECT COUNT(*) FROM amounts").fetchone()[0] == 1, name
        other.execute_sql(f"INSERT INTO amounts (n, amount) VALUES (3, {other.param})", ("3",))
        assert handle.execute_sql("SELECT COUNT(*) FROM amounts").fetchone()[0] == 3, name
        other.close()


class _Claimed(pw.Model):
    id = pw.UUIDField(primary_key=True)
    token = pw.CharField(null=True)
    status = pw.CharField()
    done_at = pw.DateTimeField(null=True)
    code = pw.IntegerField(null=True)

    class Meta:
        table_name = "claimed"


def test_compare_and_set_on_many_rows_alike(backends):
    """Only rows whose guard still holds are written; a `keep_if_none` column given None keeps its
    value, any other column given None is cleared; `same` goes to every row written."""
    ids = [uuid.UUID(int=n) for n in range(1, 4)]
    before, after = dt.datetime(2026, 3, 1, 9), dt.datetime(2026, 3, 1, 10)
    for name, handle in backends:
        with handle.bind_ctx([_Claimed]):
            handle.create_tables([_Claimed])
            _Claimed.insert_many([
                dict(id=ids[0], token="t1", status="open", done_at=None, code=None),
                dict(id=ids[1], token="someone else's", status="open", done_at=None, code=None),
                dict(id=ids[2], token="t3", status="open", done_at=before, code=5)]).execute()
            written = database.compare_and_set_each(_Claimed, _Claimed.token, [
                (ids[0], "t1", dict(status="done", done_at=after, code=200)),
                (ids[1], "t2", dict(status="done", done_at=after, code=200)),
                (ids[2], "t3", dict(status="failed", code=None))],
                same=dict(token=None), keep_if_none=("done_at",), database=handle)
            rows = {row.id: (row.token, row.status, row.done_at, row.code) for row in _Claimed.select()}
        assert written == {ids[0], ids[2]}, name
        assert rows == {ids[0]: (None, "done", after, 200), ids[1]: ("someone else's", "open", None, None),
                        ids[2]: (None, "failed", before, None)}, name
        assert database.compare_and_set_each(_Claimed, _Claimed.token, [], same={}, database=handle) == set()


class _Note(pw.Model):
    id = pw.UUIDField(primary_key=True)
    claimed = pw.UUIDField()
    code = pw.IntegerField(null=True)

    class Meta:
        table_name = "note"


def _claimed_and_notes(handle, ids):
    handle.create_tables([_Claimed, _Note])
    _Claimed.insert_many([dict(id=ids[0], token="t1", status="open"),
                          dict(id=ids[1], token="someone else's", status="open")]).execute()


def test_compare_and_set_with_a_new_row_for_each_written_alike(backends):
    """With `insert`, each row written gets its new row and the row not written none (on PostgreSQL
    in one statement, so with no transaction around it)."""
    ids, notes = [uuid.UUID(int=n) for n in (1, 2)], [uuid.UUID(int=n) for n in (11, 12)]
    for name, handle in backends:
        with handle.bind_ctx([_Claimed, _Note]):
            _claimed_and_notes(handle, ids)
            written = database.compare_and_set_each(
                _Claimed, _Claimed.token, [(ids[0], "t1", dict(status="done")), (ids[1], "t2", dict(status="done"))],
                same=dict(token=None), insert=(_Note, {ids[0]: dict(id=notes[0], claimed=ids[0], code=None),
                                                       ids[1]: dict(id=notes[1], claimed=ids[1], code=None)}),
                database=handle)
            assert not handle.in_transaction(), name
            saved = [(note.id, note.claimed, note.code) for note in _Note.select()]
            statuses = {row.id: row.status for row in _Claimed.select()}
        assert written == {ids[0]}, name
        assert saved == [(notes[0], ids[0], None)], name
        assert statuses == {ids[0]: "done", ids[1]: "open"}, name


def test_compare_and_set_with_new_rows_writes_all_or_nothing_alike(backends):
    """A new row that cannot be inserted undoes the rows' writes too, with no transaction of the caller's."""
    ids, taken = [uuid.UUID(int=n) for n in (1, 2)], uuid.UUID(int=11)
    for name, handle in backends:
        with handle.bind_ctx([_Claimed, _Note]):
            _claimed_and_notes(handle, ids)
            _Note.create(id=taken, claimed=ids[1])
            with pytest.raises(pw.IntegrityError):
                database.compare_and_set_each(_Claimed, _Claimed.token, [(ids[0], "t1", dict(status="done"))],
                                              same=dict(token=None),
                                              insert=(_Note, {ids[0]: dict(id=taken, claimed=ids[0])}),
                                              database=handle)
            rows = [(row.token, row.status) for row in _Claimed.select().order_by(_Claimed.id)]
        assert rows == [("t1", "open"), ("someone else's", "open")], name
