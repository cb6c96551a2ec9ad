"""scripts/ensure_database.py, `make stack`'s first step: a missing PostgreSQL database is created,
and what cannot be done is said in one line with the `createdb` to run, never a traceback."""
import os
import subprocess
import sys

import psycopg2
from psycopg2.extensions import parse_dsn
import pytest

from tests.support.polling import free_port
from tests.support.processes import ROOT

TEST_DATABASE_URL = os.environ.get("TEST_DATABASE_URL", "")
on_postgres = pytest.mark.skipif(not TEST_DATABASE_URL.startswith("postgres"),
                                 reason="needs PostgreSQL (TEST_DATABASE_URL)")


def ensure(url: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "scripts/ensure_database.py"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "DATABASE_URL": url})


def test_a_server_that_does_not_answer_is_one_line_naming_the_createdb_to_run():
    port = free_port()
    result = ensure(f"postgresql://postgres@127.0.0.1:{port}/tender_nowhere")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"createdb -h 127.0.0.1 -p {port} -U postgres tender_nowhere" in result.stderr


def test_sqlite_needs_nothing():
    result = ensure("sqlite:///instance/tender.db")
    assert result.returncode == 0 and "nothing to create" in result.stdout


@on_postgres
def test_a_missing_database_is_created_and_one_that_is_there_is_left_alone():
    name = parse_dsn(TEST_DATABASE_URL)["dbname"] + "_stack"
    url = TEST_DATABASE_URL.rsplit("/", 1)[0] + "/" + name

    def drop():
        connection = psycopg2.connect(TEST_DATABASE_URL)
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.close()

    drop()
    try:
        first = ensure(url)
        assert first.returncode == 0 and f"database {name}: created" in first.stdout, first.stderr
        psycopg2.connect(url).close()
        again = ensure(url)
        assert again.returncode == 0 and f"database {name}: there" in again.stdout, again.stderr
    finally:
        drop()
