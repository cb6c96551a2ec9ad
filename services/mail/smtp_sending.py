"""One SMTP exchange for one mail (docs/email.md#configuring-smtp): connect, STARTTLS or implicit TLS,
AUTH, MAIL FROM, RCPT TO, DATA, under a hard deadline on the whole exchange (core/deadlines.py), as
a webhook attempt is. Always ends in an `Answer`; no database here (services/mail/mail_outbox.py
claims the mail and records the answer).

Through the standard library's smtplib: it speaks ESMTP, STARTTLS and AUTH, and is maintained with
Python itself. Its socket timeout bounds each read only, so the connection is dialled here and a
duplicate of its socket is put under the deadline: shutting that down ends whatever read or write
is blocked, TLS or not.
"""
from __future__ import annotations

from dataclasses import dataclass
import smtplib
import socket
import ssl

from core import deadlines

RESOLVE_SECONDS = 5


@dataclass(frozen=True)
class Answer:
    """What came of an exchange: `sent`, `retry` (a 4xx, a dropped connection, a timeout) or
    `failed` (a 5xx), with the server's answer or what went wrong, for the outbox row."""
    outcome: str
    detail: str


class _DeadlineDialling:
    """smtplib's socket, dialled under the current hard deadline (a duplicate watched, closed by `close`)."""

    watched: socket.socket | None = None

    def _dial(self, host, port, timeout):
        deadline = deadlines.current()
        budget = deadline.remaining() if deadline else timeout
        addresses = deadlines.resolve(host, port, timeout=min(budget, RESOLVE_SECONDS))
        last_error: OSError = OSError(f"{host} resolved to no address")
        for address in addresses:
            try:
                sock = socket.create_connection((address, port), timeout=deadline.remaining() if deadline else timeout)
            except OSError as error:
                last_error = error
                continue
            if deadline is not None:
                self.watched = sock.dup()
                deadline.watch(self.watched)
            return sock
        raise last_error

    def close(self):
        super().close()
        if self.watched is not None:
            self.watched.close()
            self.watched = None


class _SMTP(_DeadlineDialling, smtplib.SMTP):
    def _get_socket(self, host, port, timeout):
        return self._dial(host, port, timeout)


class _SMTPS(_DeadlineDialling, smtplib.SMTP_SSL):
    def _get_socket(self, host, port, timeout):
        return self.context.wrap_socket(self._dial(host, port, timeout), server_hostname=self._host)


def send(server, message, *, sender: str, recipient: str, timeout: float, tls_context: ssl.SSLContext | None = None,
         local_hostname: str | None = None) -> Answer:
    """Send `message` (bytes) from `sender` to `recipient` through `server` (config.SmtpServer)
    within `timeout` seconds in all."""
    context = tls_context or ssl.create_default_context()
    with deadlines.hard_deadline(timeout) as deadline:
        try:
            return _exchange(server, message, sender, recipient, timeout, context, local_hostname)
        except smtplib.SMTPResponseException as error:
            return _answer_to(error.smtp_code, error.smtp_error)
        except smtplib.SMTPRecipientsRefused as error:
            code, text = next(iter(error.recipients.values()))
            return _answer_to(code, text)
        except smtplib.SMTPNotSupportedError as error:
            return Answer("retry", f"the server does not offer what Tender requires: {error}")
        except (smtplib.SMTPException, OSError) as error:
            if deadline.expired or isinstance(error, (socket.timeout, TimeoutError)):
                return Answer("retry", f"timeout: no complete answer within {timeout} s")
            return Answer("retry", f"connection failed: {type(error).__name__}: {str(error)[:300]}")


def _exchange(server, message, sender, recipient, timeout, context, local_hostname) -> Answer:
    if server.security == "tls":
        client = _SMTPS(server.host, server.port, timeout=timeout, context=context, local_hostname=local_hostname)
    else:
        client = _SMTP(server.host, server.port, timeout=timeout, local_hostname=local_hostname)
    try:
        client.ehlo()
        if server.security == "starttls":
            if not client.has_extn("starttls"):
                raise smtplib.SMTPNotSupportedError("STARTTLS (SMTP_URL asks for it unless ?starttls=0)")
            client.starttls(context=context)
            client.ehlo()
        if server.username:
            client.login(server.username, server.password or "")
        _checked(client.mail(sender))
        _checked(client.rcpt(recipient))
        code, text = _checked(client.data(message))
        return Answer("sent", _text(code, text))
    finally:
        _close(client)


def _checked(reply: tuple[int, bytes]) -> tuple[int, bytes]:
    code, text = reply
    if not 200 <= code < 400:
        raise smtplib.SMTPResponseException(code, text)
    return reply


def _close(client) -> None:
    """QUIT politely when the exchange allows, then close; a failure here changes nothing sent."""
    try:
        if client.sock is not None:
            client.quit()
    except (smtplib.SMTPException, OSError):
        pass
    finally:
        client.close()


def _answer_to(code: int, text) -> Answer:
    outcome = "failed" if 500 <= code < 600 else "retry"
    return Answer(outcome, _text(code, text))


def _text(code: int, text) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return f"{code} {' '.join(str(text).split())}"[:1000].replace("\x00", "\ufffd")
