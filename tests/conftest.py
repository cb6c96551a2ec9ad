"""Test set-up: the embedded default (SQLite + fakeredis) unless TEST_DATABASE_URL / TEST_REDIS_URL
point at real PostgreSQL / Redis. The schema is migrated once per run; every test starts clean."""
from __future__ import annotations

from decimal import Decimal
import json
import logging
import os
import re
from urllib.parse import urlsplit

import pytest

from config import load_settings
from models.base import db, is_postgres

pytest_plugins = ["tests.fixtures"]


def _test_environment(tmp_dir) -> dict:
    return {
        "DATABASE_URL": os.environ.get("TEST_DATABASE_URL") or f"sqlite:///{tmp_dir}/tender-test.db",
        **({"REDIS_URL": os.environ["TEST_REDIS_URL"]} if os.environ.get("TEST_REDIS_URL") else {}),
        "ALLOW_PRIVATE_WEBHOOK_URLS": "1",
        "SWAP_PROVIDER": "sandbox",  # required on PostgreSQL (docs/payment-engine.md#the-sandbox)
        "SUPPORTED_CURRENCIES": "USD,EUR,JPY,KWD",
        "PUBLIC_BASE_URL": "http://tender.test",
        "LOG_LEVEL": "INFO",        # request lines are logged, so the key-leak watch below reads them
        "EMBEDDED_JOBS": "0",       # tests run jobs themselves (tests/jobs/), never in the background
    }


def _create_postgres_database(url: str) -> None:
    """Create the test database if it is missing, and empty its schema, so migrations run fresh."""
    import psycopg2

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = psycopg2.connect(host=parts.hostname, port=parts.port or 5432, user=parts.username,
                             password=parts.password, dbname="postgres")
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        if cursor.fetchone() is None:
            cursor.execute(f'CREATE DATABASE "{name}"')
    admin.close()
    conn = psycopg2.connect(host=parts.hostname, port=parts.port or 5432, user=parts.username,
                            password=parts.password, dbname=name)
    conn.autocommit = True
    with conn.cursor() as cursor:
        cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    conn.close()


class _KeyLeakWatch(logging.Handler):
    """Reads every log record of the run, before any redaction, looking for a full API key."""

    FULL_KEY = re.compile(r"sk_live_[0-9a-f]{40}")

    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.records_seen = 0
        self.leaks = []

    def emit(self, record):
        self.records_seen += 1
        text = record.getMessage() + json.dumps(getattr(record, "fields", {}), default=str)
        if record.exc_info:
            text += logging.Formatter().formatException(record.exc_info)
        if self.FULL_KEY.search(text):
            self.leaks.append(f"{record.name}: {text[:300]}")


@pytest.fixture(scope="session", autouse=True)
def key_leak_watch():
    """Security: no log line of the whole test run may carry a full API key."""
    watch = _KeyLeakWatch()
    logging.getLogger().addHandler(watch)
    yield watch
    logging.getLogger().removeHandler(watch)
    assert not watch.leaks, "full API keys reached the logs:\n" + "\n".join(watch.leaks[:5])


@pytest.fixture(scope="session", autouse=True)
def loopback_only():
    """No test looks a name up beyond this machine (the resolver here is not on loopback)."""
    from tests.support import loopback_only as guard

    refused = []
    guard.install(refused)
    yield
    guard.uninstall()
    assert not refused, f"tests looked up names outside this machine: {sorted(set(map(str, refused)))[:5]}"


@pytest.fixture(scope="session", autouse=True)
def contract_checked_clients():
    """Every Flask test client validates each JSON answer against the app's /v1/openapi.json
    (tests/support/contract.py): a mismatch fails the test that received it."""
    from flask import Flask

    from tests.support.contract import ContractClient

    Flask.test_client_class = ContractClient
    yield
    Flask.test_client_class = None


@pytest.fixture(scope="session")
def test_env(tmp_path_factory) -> dict:
    env = _test_environment(tmp_path_factory.mktemp("db"))
    if env["DATABASE_URL"].startswith("postgres"):
        _create_postgres_database(env["DATABASE_URL"])
    return env


@pytest.fixture(scope="session")
def settings(test_env):
    return load_settings(test_env)


@pytest.fixture(scope="session")
def app(settings):
    from app import create_app
    from cli import migrate

    application = create_app(settings)
    migrate()
    return application


def _table_names() -> list[str]:
    return [name for name in db.get_tables() if name != "schema_migration"]


def _empty_postgres_tables(tables: list[str]) -> None:
    """DELETE from every table, children before parents by their foreign keys, in one transaction,
    then restart the sequences they own: what TRUNCATE … RESTART IDENTITY did, without its fixed
    cost (new files for every table and index, about 45 ms a test). TRUNCATE where the keys form a
    cycle, which no deletion order satisfies."""
    from graphlib import CycleError, TopologicalSorter

    quoted = ", ".join(f'"{t}"' for t in tables)
    referenced_by = {table: set() for table in tables}
    for child, parent in db.execute_sql(
            "SELECT c.relname, p.relname FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid "
            "JOIN pg_class p ON p.oid = k.confrelid WHERE k.contype = 'f' AND c.relname = ANY(%s)", (tables,)):
        if child != parent and parent in referenced_by:
            referenced_by[parent].add(child)
    try:
        order = list(TopologicalSorter(referenced_by).static_order())     # a table after those that refer to it
    except CycleError:
        db.execute_sql(f"TRUNCATE {quoted} RESTART IDENTITY CASCADE")
        return
    sequences = [name for (name,) in db.execute_sql(
        "SELECT s.oid::regclass::text FROM pg_class s JOIN pg_depend d ON d.objid = s.oid AND d.deptype IN ('a', 'i') "
        "JOIN pg_class t ON t.oid = d.refobjid WHERE s.relkind = 'S' AND t.relname = ANY(%s)", (tables,))]
    with db.atomic():
        for table in order:
            db.execute_sql(f'DELETE FROM "{table}"')
        for sequence in sequences:
            db.execute_sql(f"ALTER SEQUENCE {sequence} RESTART")


@pytest.fixture(autouse=True)
def clean_state(request):
    """Every test starts from empty tables and an empty Redis database."""
    if "app" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("app")
    from infra import metrics, queues, redis_breaker

    with db.connection_context():
        tables = _table_names()
        if is_postgres():
            _empty_postgres_tables(tables)
        else:
            db.execute_sql("PRAGMA foreign_keys = OFF")
            for table in tables:
                db.execute_sql(f'DELETE FROM "{table}"')
            db.execute_sql("PRAGMA foreign_keys = ON")
        _sandbox_starter_rates()
    metrics.flush()          # increments an earlier test left in this process's buffer go, then are wiped
    breaker = redis_breaker.breaker_of(queues.redis())
    if breaker is not None:
        breaker.close()      # a slow moment of a loaded test machine must not leak into the next test
    queues.redis().flushdb()
    yield
    if not db.is_closed():
        db.close()


@pytest.fixture(autouse=True)
def one_rate_limit_window(monkeypatch):
    """A test's requests all fall in one rate-limit window, however near a minute's end it starts.

    Windows are whole minutes of the wall clock, so a test that counted requests across a minute's
    end saw its count start again (CI once failed so). The clock keeps running, from 1 s into a
    window to come: a test has 59 s before its window ends."""
    import time

    from infra import rate_limits

    started = time.time()
    window_start = (started // rate_limits.WINDOW_SECONDS + 1) * rate_limits.WINDOW_SECONDS
    monkeypatch.setattr(rate_limits, "clock", lambda: window_start + 1 + (time.time() - started))


def _sandbox_starter_rates() -> None:
    """The sandbox's starter rates, as migration 0019 leaves them (and KWD): every test starts with them."""
    import importlib

    from core.clock import utcnow
    from models.exchange_rates import ExchangeRate

    now = utcnow()
    # KWD too: the tests' SUPPORTED_CURRENCIES has it, for a currency with three decimals.
    starter = {**importlib.import_module("migrations.0019_exchange_rates").STARTER_RATES, "KWD": "3.2540"}
    ExchangeRate.insert_many([{"source": "sandbox", "currency": code, "rate": Decimal(rate), "as_of": now,
                               "fetched_at": now} for code, rate in starter.items()]).execute()


@pytest.fixture
def client(app):
    return app.test_client()
