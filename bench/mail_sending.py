"""Mail: what queuing costs the fact's transaction, and how fast one run sends. Not a test: figures.

    .venv/bin/python -m bench.mail_sending [--mails 200] [--rounds 3]

On the embedded SQLite (a scratch file), `--mails` receipts are queued in one transaction
(services/mail/mail_outbox.queue_mail: render both parts, insert) and the time per mail reported;
then one `send_due` run sends them (8 threads, STARTTLS and AUTH, one connection per mail) to a
local aiosmtpd server (tests/support/smtp_server.py), and mails per second are reported. Each round
starts from an empty outbox.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import ssl
import tempfile
import time

CONTEXT = {"store_name": "Bench shop", "amount": "25.00", "currency": "USD", "asset": "usdc.base",
           "transaction_hash": "0x1", "invoice_id": "inv_" + "0" * 32, "paid_at": "2026-01-01T00:00:00Z"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mails", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="tender-bench-mail-"))
    os.environ.update(DATABASE_URL=f"sqlite:///{folder}/bench.db", LOG_LEVEL="WARNING", EMBEDDED_JOBS="0")
    from app import create_app
    from cli import migrate
    from config import load_settings
    from config.mail import _smtp_server
    from core.clock import utcnow
    from models.base import db
    from models.mail import Mail
    from services.mail import mail_outbox
    from tests.support.smtp_server import SmtpServer
    from tests.support.tls_certificates import LocalCA

    create_app(load_settings(os.environ))
    migrate()
    ca = LocalCA(folder)
    server = SmtpServer(ca.server("localhost")).start()
    sending = mail_outbox.Sending(_smtp_server(server.url), timeout_seconds=10, lease_seconds=30, retry_schedule=(0,),
                                  tls_context=ssl.create_default_context(cafile=ca.bundle))
    try:
        for round_number in range(args.rounds):
            with db.connection_context():
                Mail.delete().execute()
                began = time.perf_counter()
                with db.atomic():
                    for index in range(args.mails):
                        mail_outbox.queue_mail("receipt", f"buyer{index}@example.com", CONTEXT, now=utcnow(),
                                               dedupe_key=f"bench:{round_number}:{index}")
                queued = time.perf_counter()
                counts = mail_outbox.send_due(sending, max_seconds=300)
                sent = time.perf_counter()
            print(f"round {round_number + 1}: queue_mail {(queued - began) / args.mails * 1000:.2f} ms a mail; "
                  f"{counts.sent} sent in {sent - queued:.2f} s = {counts.sent / (sent - queued):.0f} mails/s")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
