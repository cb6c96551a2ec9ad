"""A client whose connection broke can retry (docs/retries.md), on the real stack: gunicorn as the
Procfile runs it, PostgreSQL and Redis. Skipped without TEST_*."""
from __future__ import annotations

import json
import socket
import subprocess

import pytest

from models.base import db
from models.invoices import Invoice
from tests.factories import make_key, make_store
from tests.support.contract import checked_session
from tests.support.polling import free_port, wait_for
from tests.support.processes import (DATABASE_URL, REDIS_URL, ROOT, healthy, procfile_command, real_stack_env,
                                     stop)

pytestmark = pytest.mark.skipif(not (DATABASE_URL and REDIS_URL),
                                reason="needs TEST_DATABASE_URL and TEST_REDIS_URL (the real stack)")


@pytest.fixture
def web(app, tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = open(tmp_path / "web.log", "wb")
    process = subprocess.Popen(procfile_command("web"), cwd=ROOT, stdout=log, stderr=log, start_new_session=True,
                               env=real_stack_env(HOST="127.0.0.1", PORT=str(port), WEB_CONCURRENCY="1",
                                                  WEB_THREADS="2", ALLOW_PRIVATE_WEBHOOK_URLS="1"))
    try:
        wait_for(lambda: healthy(base), timeout=30, what="gunicorn to answer /health")
        yield base, port
    finally:
        stop(process)
        log.close()


def send_and_hang_up(port: int, path: str, headers: dict, body: dict) -> None:
    """Send a whole request, then close the connection without reading a byte of the answer:
    what a client sees when its side (or a proxy) drops the connection mid-request."""
    payload = json.dumps(body).encode()
    head = "".join(f"{name}: {value}\r\n" for name, value in {
        **headers, "Host": "127.0.0.1", "Content-Type": "application/json", "Content-Length": str(len(payload)),
        "Connection": "close"}.items())
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(f"POST {path} HTTP/1.1\r\n{head}\r\n".encode() + payload)
        connection.shutdown(socket.SHUT_RDWR)


def test_a_create_whose_response_was_lost_is_retried_into_the_same_invoice(web):
    base, port = web
    store = make_store()
    headers = {"Authorization": f"Bearer {make_key(store)}", "Idempotency-Key": "order-1001-attempt"}
    body = {"amount": "25.00", "currency": "USD", "metadata": {"cart": "42"}}
    send_and_hang_up(port, "/v1/invoices", headers, body)

    def created():
        with db.connection_context():
            return list(Invoice.select().where(Invoice.store == store.id))

    [invoice] = wait_for(created, timeout=15, what="the lost request's invoice")     # it was created
    retry = checked_session(base).post(f"{base}/v1/invoices", json=body, headers=headers, timeout=10)
    assert retry.status_code == 201 and retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json()["id"] == invoice.public_id                                  # the client learns its id
    assert len(created()) == 1


def test_a_connect_whose_response_was_lost_is_retried_into_working_credentials(web):
    from models.integrations import Integration

    base, port = web
    store = make_store()
    headers = {"Authorization": f"Bearer {make_key(store, kind='bootstrap')}"}
    body = {"site_url": "https://shop.example.com", "webhook_url": "http://127.0.0.1:9/?wc-api=tender",
            "plugin_version": "1.0.0"}
    send_and_hang_up(port, "/v1/integration/woocommerce/connect", headers, body)

    def connected():
        with db.connection_context():
            return Integration.get_or_none(Integration.store == store.id)

    wait_for(connected, timeout=15, what="the lost connect's installation")     # the key is spent
    retry = checked_session(base).post(f"{base}/v1/integration/woocommerce/connect", json=body, headers=headers, timeout=10)
    assert retry.status_code == 200, retry.text
    assert retry.json()["credentials_rotated"] is True
    status = checked_session(base).get(f"{base}/v1/integration/woocommerce/status", timeout=10,
                          headers={"Authorization": f"Bearer {retry.json()['api_key']}"})
    assert status.status_code == 200 and status.json()["status"] == "ACTIVE"
