"""TLS to the SMTP server (docs/email.md#configuring-smtp): implicit TLS (`smtps://`) with AUTH, and a
certificate the client must not trust refused over either kind of TLS, before any AUTH or message."""
from __future__ import annotations

import dataclasses
import ssl

import pytest

from config.mail import _smtp_server
from models.base import db
from models.mail import Mail
from services.mail import mail_outbox
from tests.services.mail.conftest import queue, send
from tests.support.smtp_server import SmtpServer
from tests.support.tls_certificates import LocalCA


def _row(to):
    with db.connection_context():
        return Mail.get(Mail.recipient == to)


@pytest.fixture
def server(request):
    """Start a server (stopped after the test), as `server(tls_context, implicit_tls=…)`."""
    started = []

    def start(tls_context, **options):
        started.append(SmtpServer(tls_context, **options).start())
        return started[-1]
    yield start
    for each in started:
        each.stop()


def _sending_to(smtp, mail_ca, **changes):
    return mail_outbox.Sending(_smtp_server(smtp.url), timeout_seconds=5, lease_seconds=30, retry_schedule=(60,),
                               tls_context=ssl.create_default_context(cafile=mail_ca.bundle), **changes)


def test_a_mail_is_sent_over_implicit_tls_with_auth(app, mail_ca, server):
    smtps = server(mail_ca.server("localhost"), implicit_tls=True)
    sending = _sending_to(smtps, mail_ca)
    assert smtps.url.startswith("smtps://") and sending.smtp.security == "tls"
    queue(to="ann@example.com")
    assert send(sending).sent == 1
    [received] = smtps.to("ann@example.com")
    assert received.message["Message-ID"] == _row("ann@example.com").message_id
    assert _row("ann@example.com").last_answer.startswith("250")


def test_implicit_tls_is_not_spoken_to_a_starttls_port(app, mail_ca, smtp):
    """smtps:// to a server that expects plaintext first: no exchange, retried later, nothing sent."""
    wrong = dataclasses.replace(_sending_to(smtp, mail_ca), smtp=_smtp_server(smtp.url.replace("smtp://", "smtps://")))
    queue(to="ann@example.com")
    assert send(wrong).retrying == 1
    assert _row("ann@example.com").last_answer.startswith("connection failed") and smtp.received == []


@pytest.mark.parametrize("implicit_tls", [False, True], ids=["starttls", "implicit-tls"])
@pytest.mark.parametrize("certificate", ["another CA", "another host", "expired"])
def test_a_certificate_the_client_does_not_trust_is_refused(app, mail_ca, server, tmp_path, implicit_tls, certificate):
    if certificate == "another CA":
        context = LocalCA(tmp_path).server("localhost")
    else:
        context = mail_ca.server("smtp.elsewhere.test") if certificate == "another host" else \
            mail_ca.server("localhost", expired=True)
    untrusted = server(context, implicit_tls=implicit_tls)
    queue(to="ann@example.com")
    assert send(_sending_to(untrusted, mail_ca)).retrying == 1
    row = _row("ann@example.com")
    assert row.status == "pending" and "SSLCertVerificationError" in row.last_answer
    assert untrusted.attempts == [] and untrusted.received == []       # refused before AUTH and the message


@pytest.mark.parametrize("implicit_tls", [False, True], ids=["starttls", "implicit-tls"])
def test_the_client_trusts_only_the_systems_cas_unless_ssl_cert_file_names_another(app, mail_ca, server, monkeypatch,
                                                                                    implicit_tls):
    """Production sends with no context of its own: the system's CAs, which never include the test
    CA; SSL_CERT_FILE (the documented way to trust a local CA) adds it."""
    smtp = server(mail_ca.server("localhost"), implicit_tls=implicit_tls)
    system_trust = dataclasses.replace(_sending_to(smtp, mail_ca), tls_context=None)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    queue(to="ann@example.com")
    assert send(system_trust).retrying == 1
    assert "SSLCertVerificationError" in _row("ann@example.com").last_answer and smtp.received == []

    monkeypatch.setenv("SSL_CERT_FILE", mail_ca.bundle)
    queue(to="bob@example.com")
    assert send(system_trust).sent == 1 and [mail.recipient for mail in smtp.received] == ["bob@example.com"]
