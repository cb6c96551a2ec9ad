"""A real SMTP server in the test process (aiosmtpd): STARTTLS, or implicit TLS (`smtps://`, TLS from
the first byte), with a certificate of the tests' own CA (trustme), AUTH required over TLS, and a
script of answers per recipient, so a test makes it answer 421, 550, drop the connection or stall,
the ways real servers do."""
from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from email import message_from_bytes, policy
import ssl
import threading
import warnings

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from tests.support.polling import free_port

USERNAME, PASSWORD = "tender", "s3cret-smtp"
logging.getLogger("mail.log").setLevel(logging.WARNING)     # aiosmtpd logs every command at INFO


@dataclass
class Received:
    recipient: str
    raw: bytes

    @property
    def message(self):
        return message_from_bytes(self.raw, policy=policy.default)


@dataclass
class Script:
    """Answers to give, in turn, to the DATA of mail for each recipient: `"250"` (accept), an SMTP
    reply such as `"421 4.7.0 Try later"` or `"550 5.1.1 No such user"`, `"drop"` (close the
    connection without answering), `"accept-then-drop"` (take the message, then close before the
    answer reaches the client), `"accept-then-stall"` (take it, answer only after `stall_seconds`)
    or `"stall"` (answer a refusal after `stall_seconds`). Once a
    recipient's list is used up, every mail is accepted."""
    answers: dict = field(default_factory=dict)
    stall_seconds: float = 30.0


class _Handler:
    def __init__(self, server: "SmtpServer"):
        self.server = server

    async def handle_DATA(self, smtp, session, envelope):
        recipient = envelope.rcpt_tos[0]
        with self.server.lock:
            answers = self.server.script.answers.get(recipient) or []
            answer = answers.pop(0) if answers else "250"
            self.server.attempts.append(recipient)
        if answer == "stall":       # the client gives up first: nothing was accepted
            await asyncio.sleep(self.server.script.stall_seconds)
            return "451 4.4.2 Too slow"
        if answer == "drop":
            smtp.transport.close()
            return "421 closing"        # never reaches the client
        if not answer.startswith(("250", "accept")):
            return answer
        with self.server.lock:
            self.server.received.append(Received(recipient, envelope.original_content or envelope.content))
        if answer == "accept-then-drop":
            smtp.transport.abort()
            return "250 too late"
        if answer == "accept-then-stall":       # taken, but the answer comes too late for a client to see
            await asyncio.sleep(self.server.script.stall_seconds)
        return answer if answer != "250" else "250 2.0.0 Queued as test"


def _authenticate(server, session, envelope, mechanism, auth_data):
    # Over TLS only, STARTTLS or implicit (aiosmtpd's own check knows STARTTLS alone).
    encrypted = server.transport.get_extra_info("ssl_object") is not None
    ok = getattr(auth_data, "login", None) == USERNAME.encode() and auth_data.password == PASSWORD.encode()
    return AuthResult(success=ok and encrypted)


class _Controller(Controller):
    def factory(self):
        # With implicit TLS, aiosmtpd warns that AUTH does not require TLS: _authenticate requires it.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Requiring AUTH while not requiring TLS")
            return super().factory()


class SmtpServer:
    """Started by `start()`, stopped by `stop()`; `url` is the SMTP_URL that reaches it. With
    `implicit_tls` it speaks TLS from the first byte (smtps://) and offers no STARTTLS."""

    def __init__(self, tls_context: ssl.SSLContext, *, script: Script | None = None, implicit_tls: bool = False):
        self.port = free_port()
        self.script = script or Script()
        self.implicit_tls = implicit_tls
        self.lock = threading.Lock()
        self.received: list[Received] = []
        self.attempts: list[str] = []
        if implicit_tls:
            # aiosmtpd's auth_require_tls counts STARTTLS only: _authenticate checks the socket instead.
            tls = dict(ssl_context=tls_context, auth_require_tls=False)
        else:
            tls = dict(tls_context=tls_context, require_starttls=True)
        self.controller = _Controller(_Handler(self), hostname="127.0.0.1", port=self.port, authenticator=_authenticate,
                                      auth_required=True, server_hostname="localhost", ready_timeout=10, **tls)

    @property
    def url(self) -> str:
        scheme = "smtps" if self.implicit_tls else "smtp"
        return f"{scheme}://{USERNAME}:{PASSWORD}@localhost:{self.port}"

    def start(self) -> "SmtpServer":
        self.controller.start()
        return self

    def stop(self) -> None:
        self.controller.stop()

    def to(self, recipient: str) -> list[Received]:
        with self.lock:
            return [mail for mail in self.received if mail.recipient == recipient]
