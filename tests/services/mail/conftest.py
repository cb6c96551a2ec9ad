"""Fixtures for mail tests: a real SMTP server in this process (STARTTLS, AUTH), and how this
process sends to it."""
from __future__ import annotations

import ssl

import pytest

from config.mail import _smtp_server
from core.clock import utcnow
from models.base import db
from services.mail import mail_outbox
from tests.services.webhooks.conftest import policy, receiver  # noqa: F401  (an endpoint's mail)
from tests.support.smtp_server import SmtpServer
from tests.support.tls_certificates import LocalCA


@pytest.fixture(scope="session")
def mail_ca(tmp_path_factory):
    return LocalCA(tmp_path_factory.mktemp("mail-ca"))


@pytest.fixture
def smtp(mail_ca):
    server = SmtpServer(mail_ca.server("localhost")).start()
    yield server
    server.stop()


@pytest.fixture
def sending(smtp, mail_ca):
    """How the worker sends to `smtp`: at once on every retry (0 s), a 3 s deadline, trusting the test CA."""
    return mail_outbox.Sending(_smtp_server(smtp.url), timeout_seconds=3, lease_seconds=30,
                               retry_schedule=(0, 0, 0, 0, 0),
                               tls_context=ssl.create_default_context(cafile=mail_ca.bundle))


def queue(kind="password_reset", to="ann@example.com", *, key=None, **context):
    context = {"store_name": "Test shop", "url": "https://tender.test/r/abc", "expires_at": "2026-01-01T00:00:00Z",
               **context}
    with db.connection_context():
        return mail_outbox.queue_mail(kind, to, context, dedupe_key=key or f"{kind}:{to}", now=utcnow())


def send(sending, **kwargs):
    with db.connection_context():
        return mail_outbox.send_due(sending, **kwargs)
