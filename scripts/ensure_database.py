"""`make stack`'s first step: create the PostgreSQL database DATABASE_URL names when it is missing.

A first `make stack` otherwise stops at `flask db upgrade` with `database "tender" does not exist`.
The database is created through the server's `postgres` database, as `createdb` does, with the
same host, user and password; when that cannot be done the script says so in one line, with the
`createdb` to run, and exits 1. SQLite needs nothing: its file is made on first use.
"""
from __future__ import annotations

import os
import sys

import psycopg2
from psycopg2 import errorcodes, sql
from psycopg2.extensions import parse_dsn


def ensure_database(url: str) -> str:
    """What was done, in one line; raises RuntimeError (one line) when the database cannot be made."""
    if not url.startswith(("postgresql://", "postgres://")):
        return "database: not PostgreSQL (SQLite makes its file on first use), nothing to create"
    params = parse_dsn(url)
    name = params.get("dbname") or params.get("user") or "postgres"
    try:
        psycopg2.connect(url).close()
        return f"database {name}: there"
    except psycopg2.OperationalError as error:
        if f'database "{name}" does not exist' not in str(error):
            raise RuntimeError(_advice(params, name, error)) from None
    try:
        connection = psycopg2.connect(**{**params, "dbname": "postgres"})
    except psycopg2.OperationalError as error:
        raise RuntimeError(_advice(params, name, error)) from None
    try:
        connection.autocommit = True       # CREATE DATABASE refuses to run inside a transaction
        with connection.cursor() as cursor:
            cursor.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg2.Error as error:
        if error.pgcode != errorcodes.DUPLICATE_DATABASE:      # made meanwhile by someone else: fine
            raise RuntimeError(_advice(params, name, error)) from None
    finally:
        connection.close()
    return f"database {name}: created"


def _advice(params: dict, name: str, error: Exception) -> str:
    reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    host = params.get("host", "localhost")
    command = " ".join(part for part in ("createdb", f"-h {host}", f"-p {params['port']}" if "port" in params else "",
                                         f"-U {params['user']}" if "user" in params else "", name) if part)
    return f"cannot create database {name} ({reason}): start PostgreSQL, or run `{command}` yourself"


def main() -> int:
    try:
        print(f"make stack: {ensure_database(os.environ.get('DATABASE_URL', ''))}")
    except RuntimeError as error:
        print(f"make stack: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
