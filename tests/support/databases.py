"""A fresh database beside the test database, for a server started as its own process."""
import os
from urllib.parse import urlsplit, urlunsplit


def sibling_database(suffix: str, workdir) -> str:
    """SQLite in `workdir` on the embedded default; else `<TEST_DATABASE_URL's name>_<suffix>` on the
    same PostgreSQL, dropped and created anew (the server under test migrates it)."""
    test_url = os.environ.get("TEST_DATABASE_URL")
    if not test_url:
        return f"sqlite:///{workdir}/{suffix}.db"
    import psycopg2

    parts = urlsplit(test_url)
    name = f"{parts.path.lstrip('/')}_{suffix}"
    admin = psycopg2.connect(host=parts.hostname, port=parts.port or 5432, user=parts.username,
                             password=parts.password, dbname="postgres")
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
        cursor.execute(f'CREATE DATABASE "{name}"')
    admin.close()
    return urlunsplit(parts._replace(path="/" + name))


def postgres_in_schema(schema: str):
    """A peewee handle on the TEST_DATABASE_URL database whose tables live in `schema`, made
    empty; None on the embedded default. Drop the schema when done. The schema is a startup
    parameter of the session, which PgBouncer refuses: behind it (make test-pgbouncer) the handle
    goes straight to PostgreSQL through TEST_DATABASE_DIRECT_URL, as migrations do in production."""
    test_url = os.environ.get("TEST_DATABASE_DIRECT_URL") or os.environ.get("TEST_DATABASE_URL")
    if not test_url:
        return None
    from urllib.parse import unquote

    import peewee as pw

    parts = urlsplit(test_url)
    database = pw.PostgresqlDatabase(
        parts.path.lstrip("/"), host=parts.hostname, port=parts.port or 5432,
        user=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None, options=f"-c search_path={schema}")
    database.execute_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")
    return database
