"""models/base.make_database: a PostgreSQL URL reaches libpq whole (every parameter, host lists)."""
import os

import pytest

from models.base import make_database, postgres_parameters


def test_every_libpq_parameter_passes_through():
    params = postgres_parameters("postgresql://tender:p%40ss@db1:5432,db2:5433/tender?sslmode=require"
                                 "&application_name=tender-web&connect_timeout=2&target_session_attrs=read-write"
                                 "&keepalives_idle=30")
    assert params == {"database": "tender", "user": "tender", "password": "p@ss", "host": "db1,db2",
                      "port": "5432,5433", "sslmode": "require", "application_name": "tender-web",
                      "connect_timeout": "2", "target_session_attrs": "read-write", "keepalives_idle": "30"}


def test_connect_timeout_defaults_to_five_seconds():
    assert postgres_parameters("postgresql://u@h/db")["connect_timeout"] == "5"


@pytest.mark.skipif(not (os.environ.get("TEST_DATABASE_URL") or "").startswith("postgres"),
                    reason="connects to the real PostgreSQL")
def test_a_host_list_finds_the_writable_server_and_keeps_the_parameters(app):     # app: the database exists
    import psycopg2

    real = psycopg2.extensions.parse_dsn(os.environ["TEST_DATABASE_URL"])
    user = f"{real['user']}@" if real.get("user") else ""
    # The first host listed answers nothing (port 1 on loopback); libpq goes on to the next.
    url = (f"postgresql://{user}127.0.0.1:1,{real['host']}:{real.get('port', '5432')}/{real['dbname']}"
           "?target_session_attrs=read-write&application_name=tender-conn-test&connect_timeout=3")
    database = make_database(url, max_connections=1)
    try:
        with database.connection_context():
            row = database.execute_sql("SELECT current_setting('application_name'), "
                                       "current_setting('transaction_read_only')").fetchone()
    finally:
        database.close_all()
    assert row == ("tender-conn-test", "off")


@pytest.mark.skipif(not (os.environ.get("TEST_DATABASE_URL") or "").startswith("postgres"),
                    reason="migrates the real PostgreSQL")
def test_migrations_connect_to_the_direct_url_not_the_pooled_one(app):
    """`flask db upgrade` (the release step) goes to DATABASE_DIRECT_URL: here DATABASE_URL is a port
    nothing listens on, as a PgBouncer that would refuse would be, and the upgrade still succeeds."""
    import subprocess
    import sys

    from tests.support.processes import ROOT

    env = {key: value for key, value in os.environ.items() if not key.startswith(("TEST_", "PYTEST", "REDIS_"))}
    env.update({"DATABASE_URL": "postgresql://postgres@127.0.0.1:1/unused", "SWAP_PROVIDER": "sandbox",
                "DATABASE_DIRECT_URL": os.environ["TEST_DATABASE_URL"], "PYTHONPATH": str(ROOT)})
    upgrade = [os.path.join(os.path.dirname(sys.executable), "flask"), "--app", "wsgi", "db", "upgrade"]
    done = subprocess.run(upgrade, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "schema is up to date" in done.stdout, done.stderr[-2000:]
    env.pop("DATABASE_DIRECT_URL")
    refused = subprocess.run(upgrade, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0
