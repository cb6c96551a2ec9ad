"""SIGTERM lets web and worker processes finish in-flight work, on the real stack:
gunicorn with gunicorn.conf.py, and `rq worker` exactly as the Procfile runs it.

The in-flight work is held without any test-only code path: the test holds a PostgreSQL row lock
(`FOR UPDATE`) that the request's or the job's own write must wait for, sends SIGTERM while the
work waits, then releases the lock and checks the work completed. Skipped without TEST_*.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
import os
import signal
import subprocess
import threading

import pytest
import requests

from core.clock import utcnow
from models.base import db
from models.events import Event
from models.invoices import Invoice
from tests.factories import make_invoice, make_key, make_store
from tests.support.polling import free_port, wait_for
from tests.support.processes import (DATABASE_URL, REDIS_URL, ROOT, observer_redis, procfile_command, real_stack_env,
                                     stop)


pytestmark = pytest.mark.skipif(not (DATABASE_URL and REDIS_URL),
                                reason="needs TEST_DATABASE_URL and TEST_REDIS_URL (the real stack)")


class RowLock:
    """A row held `FOR UPDATE` from a connection of the test's own, until `release()`."""

    def __init__(self, table: str, row_id):
        import psycopg2

        self.connection = psycopg2.connect(DATABASE_URL)
        with self.connection.cursor() as cursor:
            cursor.execute(f"SELECT 1 FROM {table} WHERE id = %s FOR UPDATE", (str(row_id),))
            assert cursor.fetchone() is not None

    def waiters(self) -> int:
        """How many other sessions of this database are waiting on a lock right now."""
        import psycopg2

        connection = psycopg2.connect(DATABASE_URL)
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                               "AND wait_event_type = 'Lock'")
                return cursor.fetchone()[0]
        finally:
            connection.close()

    def release(self) -> None:
        if not self.connection.closed:
            self.connection.rollback()
            self.connection.close()


def test_gunicorn_finishes_an_in_flight_request_after_sigterm(app, tmp_path):
    store = make_store()
    key = make_key(store)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = open(tmp_path / "web.log", "wb")
    web = subprocess.Popen(procfile_command("web"), cwd=ROOT, stdout=log, stderr=log, start_new_session=True,
                           env=real_stack_env(HOST="127.0.0.1", PORT=str(port), WEB_CONCURRENCY="1", WEB_THREADS="4"))
    lock = None
    try:
        def healthy():
            try:
                return requests.get(f"{base}/health", timeout=1).status_code == 200
            except requests.RequestException:
                return False

        wait_for(healthy, timeout=30, what="gunicorn to answer /health")
        # The invoice INSERT checks its foreign key with a KEY SHARE lock on the store row: it waits.
        lock = RowLock("store", store.id)
        answer = {}

        def create():
            answer["response"] = requests.post(f"{base}/v1/invoices", json={"amount": "12.00", "currency": "USD"},
                                               headers={"Authorization": f"Bearer {key}"}, timeout=60)

        client = threading.Thread(target=create)
        client.start()
        wait_for(lambda: lock.waiters() >= 1, timeout=15, what="the request to wait on the store row")

        os.kill(web.pid, signal.SIGTERM)
        # Shutdown has begun once a new request is no longer served; the first one is still waiting.
        wait_for(lambda: not healthy(), timeout=15, what="gunicorn to stop taking new requests")
        assert client.is_alive() and web.poll() is None

        lock.release()
        client.join(timeout=30)
        response = answer["response"]
        assert response.status_code == 201, response.text
        invoice_id = response.json()["id"]
        assert web.wait(timeout=30) == 0
        with db.connection_context():
            assert Invoice.get(Invoice.public_id == invoice_id).status == "pending"
    finally:
        if lock is not None:
            lock.release()
        stop(web)
        log.close()


def test_rq_worker_finishes_the_running_job_after_sigterm(app, tmp_path):
    """The job is held in a slow provider read (SANDBOX_LATENCY_MS), which a signal interrupts at
    once: a job blocked in C (a lock wait in libpq) would only see SIGTERM after it returned."""
    from rq import Worker
    from rq.job import Job, JobStatus

    from models.sandbox import SandboxDeposit
    from providers.sandbox import SandboxProvider
    from infra import queues

    store = make_store()
    past = utcnow() - dt.timedelta(hours=2)
    with db.connection_context():
        quote = SandboxProvider().quote(_quote_request(deadline=past + dt.timedelta(minutes=1)))
    invoice = make_invoice(store, now=past, expires_at=past + dt.timedelta(minutes=1), status="awaiting_payment",
                           deposit_address=quote.deposit_address, origin_asset="usdc.eth",
                           amount_due=quote.amount_in, refund_to="0xrefund")
    connection = observer_redis()
    log = open(tmp_path / "worker.log", "wb")
    worker = subprocess.Popen(procfile_command("worker"), cwd=ROOT, stdout=log, stderr=log,
                              start_new_session=True, env=real_stack_env(SANDBOX_LATENCY_MS="3000",
                                                                         EXPIRY_PROVIDER_TIMEOUT_SECONDS="10"))
    try:
        job = queues.queue("maintenance").enqueue("jobs.maintenance.sweep_expired_invoices", result_ttl=600)
        wait_for(lambda: Job.fetch(job.id, connection=connection).get_status() == JobStatus.STARTED,
                 timeout=30, what="the worker to start the sweep")

        os.kill(worker.pid, signal.SIGTERM)
        # RQ notes the warm shutdown request on the worker's Redis hash, and lets the job run on.
        wait_for(lambda: any(w.shutdown_requested_date for w in Worker.all(connection=connection)),
                 timeout=15, what="the worker to note the warm shutdown request")
        assert worker.poll() is None
        assert Job.fetch(job.id, connection=connection).get_status() == JobStatus.STARTED

        assert worker.wait(timeout=30) == 0
        finished = Job.fetch(job.id, connection=connection)
        assert finished.get_status() == JobStatus.FINISHED
        assert finished.return_value() == 1
        with db.connection_context():
            assert Invoice.get_by_id(invoice.id).status == "expired"
            assert Event.select().where((Event.invoice == invoice.id) & (Event.type == "invoice.expired")).count() == 1
            assert SandboxDeposit.get_by_id(quote.deposit_address).deposited_at is None
    finally:
        stop(worker)
        log.close()


def _quote_request(*, deadline):
    from providers.base import QuoteRequest

    return QuoteRequest(origin_asset="usdc.eth", destination_asset="usdc.near", amount_out=Decimal("10.00"),
                        recipient="merchant.near", refund_to="0xrefund", deadline=deadline, dry=False)
