"""The database's differences (infra/database.py): each function gives the same answer on SQLite and
on PostgreSQL, run here on both in one test (PostgreSQL when TEST_DATABASE_URL is set; in a
schema of its own, so the suite's tables are not touched)."""
from decimal import Decimal

import peewee as pw
import pytest

from infra import database
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
