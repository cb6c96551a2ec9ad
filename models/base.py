"""The database handle shared by every model, and how it is built from DATABASE_URL.

`db` is a proxy: models bind to it at import, the real database is attached once at start-up
(`init_db`). Nothing connects at import; connections are borrowed per request and per job.
"""
from __future__ import annotations

import os

import peewee as pw
from playhouse.pool import PooledPostgresqlDatabase

from models.after_commit import DatabaseProxy

db = DatabaseProxy()      # nested atomic() blocks keep after-commit callbacks right (models/after_commit.py)


class BaseModel(pw.Model):
    class Meta:
        database = db
        legacy_table_names = False


def make_database(url: str, *, max_connections: int = 20, stale_timeout: int = 300) -> pw.Database:
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///"):]
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        return pw.SqliteDatabase(
            path,
            pragmas={"journal_mode": "wal", "busy_timeout": 10000, "foreign_keys": 1, "synchronous": "normal"},
            # SQLite has no exact decimal type: a NUMERIC column would round 18-digit amounts
            # through float, so amounts are stored as text there (see models/fields.py).
            field_types={"DECIMAL": "TEXT"},
            autoconnect=True,
        )
    # A pool per process, filled lazily after the fork; stale connections are replaced on
    # check-out, and a connection that broke mid-request is discarded (blueprints/errors.py).
    return PooledPostgresqlDatabase(
        **postgres_parameters(url),
        max_connections=max_connections,
        stale_timeout=stale_timeout,
        timeout=10,
        autoconnect=True,
    )


def postgres_parameters(url: str) -> dict:
    """The URL's libpq parameters, all of them, as psycopg2.connect takes them: libpq itself reads
    the URL, so a host list (`h1:5432,h2:5432`), `sslmode`, `application_name`, `target_session_attrs`
    and the rest reach the connection as written. `connect_timeout` is 5 s unless the URL says."""
    from psycopg2.extensions import parse_dsn

    params = parse_dsn(url)
    params.setdefault("connect_timeout", "5")
    return {"database": params.pop("dbname"), **params}


def init_db(database: pw.Database) -> pw.Database:
    db.initialize(database)
    return database


def is_postgres() -> bool:
    return isinstance(db.obj, pw.PostgresqlDatabase)


def discard_connection() -> None:
    """Drop this thread's connection instead of returning it to the pool (it may be broken)."""
    database = db.obj
    if database is None or database.is_closed():
        return
    if hasattr(database, "manual_close"):
        database.manual_close()
    else:
        database.close()


def replace_connection() -> None:
    """Swap this thread's (broken) connection for a fresh one, keeping the `connection_context()`
    a job opened around the caller: discarding alone would leave that context nothing to close."""
    database = db.obj
    open_contexts = list(database._state.ctx)
    discard_connection()
    database.connect()
    database._state.ctx.extend(open_contexts)
