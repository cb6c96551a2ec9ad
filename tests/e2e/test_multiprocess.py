"""The real stack as separate OS processes: gunicorn, `rq worker` and `rq cron` on PostgreSQL and
Redis. Skipped unless TEST_DATABASE_URL and TEST_REDIS_URL are set.

These tests do not use the `app` fixture: setup goes through the operator CLI, traffic through
HTTP, and the few checks only the database can answer are plain SQL reads.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
import signal
import subprocess
import sys

import pytest
import requests

from tests.support.contract import checked_session
from tests.support.polling import free_port, wait_for
from tests.support.processes import stop

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DATABASE_URL = os.environ.get("TEST_DATABASE_URL")
REDIS_URL = os.environ.get("TEST_REDIS_URL")

pytestmark = pytest.mark.skipif(not (DATABASE_URL and REDIS_URL),
                                reason="needs TEST_DATABASE_URL and TEST_REDIS_URL (the real stack)")

TTL_SECONDS = 12


def _env(**extra) -> dict:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("TEST_", "PYTEST"))}
    env.update({
        "DATABASE_URL": DATABASE_URL, "REDIS_URL": REDIS_URL, "PYTHONPATH": str(ROOT),
        "INVOICE_TTL_SECONDS": str(TTL_SECONDS), "CHAIN_POLL_INTERVAL_SECONDS": "1",
        "SETTLEMENT_POLL_INTERVAL_SECONDS": "1", "EXPIRY_SWEEP_INTERVAL_SECONDS": "1",
        "LOG_LEVEL": "WARNING", "SWAP_PROVIDER": "sandbox",
    })
    env.update(extra)
    return env


class Processes:
    """The processes the module's tests start, by name. A name started again while its process
    still runs (a test that failed before its `finally`) stops the old one first: CI once found
    orphan `rq worker` processes, whose handles a second start under the same name had dropped."""

    def __init__(self):
        self.running: dict[str, subprocess.Popen] = {}

    def start(self, name: str, argv: list[str], env: dict) -> subprocess.Popen:
        if name in self.running:
            self.stop(name)
        # Each process logs to its own file (E2E_LOG_DIR to keep them), for a failure's post-mortem.
        log_dir = Path(os.environ.get("E2E_LOG_DIR") or os.devnull).parent if not os.environ.get("E2E_LOG_DIR") \
            else Path(os.environ["E2E_LOG_DIR"])
        log = open(log_dir / f"{name}.log", "ab") if os.environ.get("E2E_LOG_DIR") else subprocess.DEVNULL
        process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True)
        self.running[name] = process
        return process

    def stop(self, name: str, sig=signal.SIGTERM) -> None:
        process = self.running.pop(name, None)     # None: already stopped (a kill -9 whose restart failed)
        if process is not None:
            stop(process, sig)

    def stop_all(self) -> None:
        """Every one, even when stopping one of them fails."""
        name = next(iter(self.running), None)
        if name is not None:
            try:
                self.stop(name)
            finally:
                self.stop_all()


def start_worker(processes: Processes, name: str = "worker", **env):
    return processes.start(name, [str(BIN / "rq"), "worker", "--url", REDIS_URL,
                                  "--worker-class", "rq.worker.SimpleWorker", "--dequeue-strategy", "round_robin",
                                  "chain", "settlement", "maintenance"], _env(**env))


@pytest.fixture(scope="module")
def stack():
    import redis

    redis.Redis.from_url(REDIS_URL).flushdb()
    env = _env()
    subprocess.run([str(BIN / "flask"), "--app", "wsgi", "db", "upgrade"], cwd=ROOT, env=env, check=True,
                   capture_output=True)
    created = subprocess.run([str(BIN / "flask"), "--app", "wsgi", "stores", "create", "--name", "E2E shop",
                              "--payout-wallet", "e2e-merchant.near", "--json"], cwd=ROOT, env=env, check=True,
                             capture_output=True, text=True)
    api_key = json.loads(created.stdout.strip().splitlines()[-1])["api_key"]
    port = free_port()
    processes = Processes()
    try:
        processes.start("web", [str(BIN / "gunicorn"), "--config", "gunicorn.conf.py", "wsgi:app"],
                        _env(HOST="127.0.0.1", PORT=str(port), WEB_CONCURRENCY="1", WEB_THREADS="4"))
        processes.start("cron", [str(BIN / "rq"), "cron", "--url", REDIS_URL, "scheduler/cron.py"], env)
        base_url = f"http://127.0.0.1:{port}"

        def healthy():
            try:
                return requests.get(f"{base_url}/health", timeout=1).status_code == 200
            except requests.RequestException:     # refused, or the worker still booting (a read timeout)
                return False

        wait_for(healthy, timeout=30, what="gunicorn to answer /health")
        session = checked_session(base_url)      # every JSON answer is validated against the document
        session.headers["Authorization"] = f"Bearer {api_key}"
        yield {"url": base_url, "session": session, "processes": processes}
    finally:
        processes.stop_all()


def _sql(query: str, *params):
    import psycopg2

    connection = psycopg2.connect(DATABASE_URL)
    try:
        with connection.cursor() as cursor:
            cursor.execute(query, params)
            return cursor.fetchall()
    finally:
        connection.close()


def _create_and_pay(stack, outcome: str | None):
    session, url = stack["session"], stack["url"]
    created = session.post(f"{url}/v1/invoices", json={"amount": "25.00"}, timeout=5)
    assert created.status_code == 201, created.text
    invoice_id = created.json()["id"]
    if outcome is not None:
        paid = session.post(f"{url}/v1/test_helpers/invoices/{invoice_id}/pay",
                            json={} if outcome == "success" else {"outcome": outcome}, timeout=5)
        assert paid.status_code == 202, paid.text
    return invoice_id


def _status(stack, invoice_id) -> dict:
    return stack["session"].get(f"{stack['url']}/v1/invoices/{invoice_id}/status", timeout=5).json()


def test_every_outcome_end_to_end(stack):
    workers = stack["processes"]
    start_worker(workers)
    try:
        ids = {outcome: _create_and_pay(stack, outcome)
               for outcome in ("success", "underpaid", "refunded", "failed", None)}
        expected = {"success": "paid", "underpaid": "underpaid", "refunded": "refunded", "failed": "failed",
                    None: "expired"}
        # First `paid`, still converting ...
        wait_for(lambda: _status(stack, ids["success"])["status"] == "paid", timeout=30, what="paid")
        # ... then settled, while the others reach their own final states.
        settled = wait_for(lambda: (lambda s: s if s["received_amount"] else None)(_status(stack, ids["success"])),
                           timeout=30, what="settlement")
        assert settled["swap_status"] is None and settled["difference_amount"] == "-0.13"
        for outcome, invoice_id in ids.items():
            wait_for(lambda: _status(stack, invoice_id)["status"] == expected[outcome],
                     timeout=TTL_SECONDS + 30, what=f"{outcome} -> {expected[outcome]}")
        events = dict(_sql("SELECT i.public_id, string_agg(e.type, ',' ORDER BY e.created_at, e.type) FROM event e "
                           "JOIN invoice i ON i.id = e.invoice_id WHERE i.public_id = ANY(%s) GROUP BY 1",
                           list(ids.values())))
        assert events[ids["success"]].split(",")[-2:] == ["invoice.paid", "invoice.settled"]
        assert events[ids[None]].endswith("invoice.expired")
        for outcome in ("underpaid", "refunded", "failed"):
            assert events[ids[outcome]].endswith(f"invoice.{outcome}")
    finally:
        workers.stop("worker")


@pytest.mark.parametrize("phase", ["chain", "settlement"])
def test_worker_killed_mid_poll_recovers(stack, phase):
    """kill -9 the worker while it waits on the provider; a new worker finishes the job exactly once."""
    workers = stack["processes"]
    slow = {"SANDBOX_LATENCY_MS": "1500", "POLL_LEASE_SECONDS": "3"}
    start_worker(workers, **slow)
    try:
        invoice_id = _create_and_pay(stack, "success")

        def claimed_in_phase():
            rows = _sql("SELECT status, swap_status, claim_token FROM invoice LEFT JOIN poll_state "
                        "ON poll_state.invoice_id = invoice.id WHERE public_id = %s", invoice_id)
            status, swap_status, token = rows[0]
            in_phase = status == "awaiting_payment" if phase == "chain" else (status, swap_status) == ("paid", "processing")
            return in_phase and token is not None

        wait_for(claimed_in_phase, timeout=30, what=f"the worker to claim the invoice in {phase}", interval=0.05)
        workers.stop("worker", sig=signal.SIGKILL)
        start_worker(workers, **slow)
        wait_for(lambda: _status(stack, invoice_id)["received_amount"], timeout=45, what="settlement after restart")
        counts = dict(_sql("SELECT e.type, count(*) FROM event e JOIN invoice i ON i.id = e.invoice_id "
                           "WHERE i.public_id = %s GROUP BY 1", invoice_id))
        assert counts == {"invoice.created": 1, "invoice.awaiting_payment": 1, "invoice.paid": 1,
                          "invoice.settled": 1}
        txns = _sql("SELECT t.type, count(*) FROM \"transaction\" t JOIN invoice i ON i.id = t.invoice_id "
                    "WHERE i.public_id = %s GROUP BY 1 ORDER BY 1", invoice_id)
        assert txns == [("payment_origin", 1), ("settlement", 1)]
        assert _status(stack, invoice_id)["status"] == "paid"
    finally:
        workers.stop("worker")


def test_cancel_crossing_a_deposit_overpaid_and_top_up_end_to_end(stack):
    """Money is never left unrecorded (docs/payment-engine.md): a deposit that crossed the cancel pays
    the cancelled invoice, an overpayment settles net of its refunded excess, a top-up pays an
    underpaid invoice, each with one `invoice.paid`, through gunicorn, an rq worker and rq cron."""
    session, url, workers = stack["session"], stack["url"], stack["processes"]
    start_worker(workers)
    try:
        crossed = _create_and_pay(stack, None)
        quoted = session.post(f"{url}/v1/public/invoices/{crossed}/quote", timeout=5,
                              json={"origin_asset": "usdc.eth", "refund_to": "0x" + "1" * 40, "dry": False})
        assert quoted.status_code == 200, quoted.text
        cancelled = session.post(f"{url}/v1/invoices/{crossed}/cancel", timeout=5)
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled", cancelled.text
        assert session.post(f"{url}/v1/test_helpers/invoices/{crossed}/pay", json={}, timeout=5).status_code == 202
        overpaid = _create_and_pay(stack, "overpaid")
        topped_up = _create_and_pay(stack, "underpaid")
        wait_for(lambda: _status(stack, topped_up)["status"] == "underpaid", timeout=30, what="underpaid")
        assert session.post(f"{url}/v1/test_helpers/invoices/{topped_up}/pay", json={"outcome": "success"},
                            timeout=5).status_code == 202
        for invoice_id in (crossed, overpaid, topped_up):
            wait_for(lambda: _status(stack, invoice_id)["received_amount"], timeout=40, what=f"{invoice_id} settled")
        paid_events = dict(_sql("SELECT i.public_id, e.payload FROM event e JOIN invoice i ON i.id = e.invoice_id "
                                "WHERE e.type = 'invoice.paid' AND i.public_id = ANY(%s)",
                                [crossed, overpaid, topped_up]))
        previous = {key: (payload if isinstance(payload, dict) else __import__("json").loads(payload))["previous_status"]
                    for key, payload in paid_events.items()}
        assert previous == {crossed: "cancelled", overpaid: "awaiting_payment", topped_up: "underpaid"}
        refunds = _sql("SELECT count(*) FROM \"transaction\" t JOIN invoice i ON i.id = t.invoice_id "
                       "WHERE t.type = 'refund' AND i.public_id = %s", overpaid)
        assert refunds == [(1,)] and _status(stack, overpaid)["paid_amount"] == "25.13"
    finally:
        workers.stop("worker")


def test_refund_part_then_the_rest_end_to_end(stack):
    """Merchant refunds on the real stack (docs/refunds.md): pay, refund part, refund the rest; the
    refund poller runs in the rq worker on its cron tick, and the invoice ends refunded."""
    session, url, workers = stack["session"], stack["url"], stack["processes"]
    start_worker(workers)
    try:
        invoice_id = _create_and_pay(stack, "success")
        wait_for(lambda: _status(stack, invoice_id)["received_amount"], timeout=30, what="settlement")

        def refund_and_fund(amount):
            created = session.post(f"{url}/v1/invoices/{invoice_id}/refunds", json={"amount": amount}, timeout=10)
            assert created.status_code == 201, created.text
            refund_id = created.json()["id"]
            funded = session.post(f"{url}/v1/test_helpers/refunds/{refund_id}/fund", json={}, timeout=10)
            assert funded.status_code == 202, funded.text
            return wait_for(lambda: (lambda r: r if r["status"] == "succeeded" else None)(
                session.get(f"{url}/v1/refunds/{refund_id}", timeout=5).json()), timeout=30, what=f"refund {amount}")

        first = refund_and_fund("10.00")
        invoice = session.get(f"{url}/v1/invoices/{invoice_id}", timeout=5).json()
        assert (invoice["status"], invoice["refunded_amount"]) == ("paid", "10.00")
        over = session.post(f"{url}/v1/invoices/{invoice_id}/refunds", json={"amount": "15.01"}, timeout=10)
        assert over.json()["error"]["code"] == "refund_exceeds_refundable"
        rest = refund_and_fund("15.00")
        invoice = session.get(f"{url}/v1/invoices/{invoice_id}", timeout=5).json()
        assert (invoice["status"], invoice["refunded_amount"]) == ("refunded", "25.00")
        delivered = _sql("SELECT t.transaction_hash FROM \"transaction\" t JOIN invoice i ON i.id = t.invoice_id "
                         "WHERE i.public_id = %s AND t.type = 'refund' AND t.refund_id IS NOT NULL ORDER BY 1",
                         invoice_id)
        assert sorted(row[0] for row in delivered) == sorted([first["transaction_hash"], rest["transaction_hash"]])
        counts = dict(_sql("SELECT e.type, count(*) FROM event e JOIN invoice i ON i.id = e.invoice_id "
                           "WHERE i.public_id = %s AND (e.type LIKE 'refund.%%' OR e.type = 'invoice.refunded') "
                           "GROUP BY 1", invoice_id))
        assert counts == {"refund.created": 2, "refund.succeeded": 2, "invoice.refunded": 1}
    finally:
        workers.stop("worker")
