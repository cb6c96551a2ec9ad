"""The service heals by itself when database connections die, and /health says when it cannot."""
import os
from urllib.parse import urlsplit

import pytest

from infra import health
from models.base import db, init_db, make_database

needs_postgres = pytest.mark.skipif(not os.environ.get("TEST_DATABASE_URL"), reason="needs PostgreSQL")


def _terminate_other_backends(database_url: str) -> int:
    import psycopg2

    parts = urlsplit(database_url)
    conn = psycopg2.connect(host=parts.hostname, port=parts.port or 5432, user=parts.username,
                            dbname=parts.path.lstrip("/"))
    conn.autocommit = True
    with conn.cursor() as cursor:
        cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        killed = cursor.fetchone()[0]
    conn.close()
    return killed


@needs_postgres
def test_pooled_connections_killed_by_the_server_are_replaced_without_a_failed_request(client, auth, test_env):
    assert client.get("/v1/invoices", headers=auth).status_code == 200   # the pool now holds a connection
    assert _terminate_other_backends(test_env["DATABASE_URL"]) >= 1

    response = client.get("/v1/invoices", headers=auth)

    assert response.status_code == 200, response.json


def test_health_is_degraded_with_503_when_the_database_does_not_answer(client, settings):
    healthy = db.obj
    init_db(make_database("postgresql://postgres@127.0.0.1:1/unreachable"))
    try:
        response = client.get("/health")
    finally:
        init_db(healthy)
    assert response.status_code == 503
    assert response.json["status"] == "degraded"
    assert response.json["components"]["database"] == "unavailable"


def test_a_request_whose_database_is_unreachable_answers_503_json_not_500(client, auth):
    healthy = db.obj
    init_db(make_database("postgresql://postgres@127.0.0.1:1/unreachable"))
    try:
        response = client.get("/v1/invoices", headers=auth)
    finally:
        init_db(healthy)
    assert response.status_code == 503
    assert response.json["error"]["code"] == "service_unavailable"
    assert response.headers["Retry-After"] == "5"


def test_health_reports_redis_degraded_but_stays_200_while_the_database_answers(client, monkeypatch,
                                                                                unreachable_redis):
    from infra import queues

    monkeypatch.setitem(queues._state, "redis", unreachable_redis)
    report = health.check()
    assert report["components"] == {"database": "ok", "redis": "unavailable", "provider": "unknown"}
    assert report["status"] == "degraded"
