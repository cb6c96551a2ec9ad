"""The receipt on the real stack: the Procfile's `web`, `worker` and `scheduler` on PostgreSQL and
Redis, sending to a real SMTP server in this process (STARTTLS, AUTH). An invoice with a
`customer_email` is paid in the sandbox, and the buyer's receipt and the merchant's payment mail
each arrive once. Setup through the operator CLI, traffic through HTTP, as in the README's
walk-through. Skipped unless TEST_DATABASE_URL and TEST_REDIS_URL are set."""
from __future__ import annotations

import json
import signal
import subprocess
import uuid

import pytest
import requests

from tests.e2e.test_multiprocess import _sql
from tests.support.contract import checked_session
from tests.support.polling import free_port, wait_for
from tests.support.processes import (DATABASE_URL, REDIS_URL, ROOT, healthy, observer_redis, procfile_command,
                                     real_stack_env, stop)
from tests.support.smtp_server import SmtpServer
from tests.support.tls_certificates import LocalCA

pytestmark = pytest.mark.skipif(not (DATABASE_URL and REDIS_URL),
                                reason="needs TEST_DATABASE_URL and TEST_REDIS_URL (the real stack)")


def _flask(env: dict, *args: str) -> str:
    return subprocess.run(procfile_command("release")[:3] + list(args), cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True).stdout


def _outbox(to: str) -> list[dict]:
    """The outbox's rows to `to` (a plain SQL read: only the database knows)."""
    rows = _sql("SELECT kind, status, message_id FROM mail WHERE recipient = %s", to)
    return [dict(zip(("kind", "status", "message_id"), row)) for row in rows]


def test_a_paid_invoice_mails_the_receipt_and_the_merchant_once_on_the_real_stack(tmp_path):
    ca = LocalCA(tmp_path)
    smtp = SmtpServer(ca.server("localhost")).start()
    port = free_port()
    env = real_stack_env(SMTP_URL=smtp.url, MAIL_FROM="Sandbox shop <payments@tender.test>", SSL_CERT_FILE=ca.bundle,
                         HOST="127.0.0.1", PORT=str(port), WEB_CONCURRENCY="1", CHAIN_POLL_INTERVAL_SECONDS="1",
                         SETTLEMENT_POLL_INTERVAL_SECONDS="1")
    run = uuid.uuid4().hex[:8]
    buyer, merchant = f"buyer-{run}@example.com", f"shop-{run}@example.com"
    started: list[subprocess.Popen] = []
    try:
        observer_redis().flushdb()
        subprocess.run(procfile_command("release"), cwd=ROOT, env=env, check=True, capture_output=True)
        store = json.loads(_flask(env, "stores", "create", "--name", "Receipt shop", "--payout-wallet",
                                  "e2e-merchant.near", "--json").strip().splitlines()[-1])
        for name in ("web", "worker", "scheduler"):
            started.append(subprocess.Popen(procfile_command(name), cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL, start_new_session=True))
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: healthy(url), timeout=60, what="gunicorn to answer /health")
        api = checked_session(url)             # every JSON answer is checked against the API document
        api.headers["Authorization"] = f"Bearer {store['api_key']}"

        chosen = api.patch(f"{url}/v1/store/notifications", json={"recipients": [merchant]}, timeout=10)
        assert chosen.status_code == 200, chosen.text
        created = api.post(f"{url}/v1/invoices", json={"amount": "12.50", "currency": "USD",
                                                        "customer_email": buyer}, timeout=10)
        assert created.status_code == 201, created.text
        invoice_id = created.json()["id"]
        paid = api.post(f"{url}/v1/test_helpers/invoices/{invoice_id}/pay", json={}, timeout=10)
        assert paid.status_code == 202, paid.text

        wait_for(lambda: smtp.to(buyer) and smtp.to(merchant), timeout=90, what="the receipt and the merchant's mail")
        # Both rows are `sent` (sent mail is never claimed again): what arrived is all that ever will.
        wait_for(lambda: [mail["status"] for mail in _outbox(buyer) + _outbox(merchant)] == ["sent", "sent"],
                 timeout=30, what="both mails recorded as sent")
        assert requests.get(f"{url}/v1/invoices/{invoice_id}", headers=api.headers, timeout=10).json()["status"] == "paid"
        [receipt], [payment] = smtp.to(buyer), smtp.to(merchant)
        assert [mail["kind"] for mail in _outbox(buyer)] == ["receipt"]
        assert [mail["kind"] for mail in _outbox(merchant)] == ["payment_received"]
        for received, to in ((receipt, buyer), (payment, merchant)):
            [row] = _outbox(to)
            assert received.message["Message-ID"] == row["message_id"] and received.message["To"] == to
            assert invoice_id in received.message.get_body(("plain",)).get_content()
        assert "Receipt shop" in receipt.message["Subject"] + receipt.message.get_body(("plain",)).get_content()
        assert "12.50" in payment.message.get_body(("plain",)).get_content()
    finally:
        for process in started:
            stop(process, signal.SIGTERM, grace=15)
        smtp.stop()
