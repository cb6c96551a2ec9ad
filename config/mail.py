"""The mail settings (docs/email.md#configuring-smtp), read by config.load_settings: SMTP_URL,
MAIL_FROM and the sender's timing, with the readers and errors of config/__init__.py."""
from __future__ import annotations

from dataclasses import dataclass, field
import re
from urllib.parse import parse_qs, unquote, urlsplit

from config.env import ConfigError, redact


@dataclass(frozen=True)
class SmtpServer:
    """Where mail goes (SMTP_URL, docs/email.md#configuring-smtp): `security` is `starttls` (required
    unless ?starttls=0), `tls` (smtps://, implicit TLS) or `none` (?starttls=0: a local relay)."""
    host: str
    port: int
    security: str
    username: str | None = None
    password: str | None = field(default=None, repr=False)     # never in a log line


def mail_settings(env, default) -> dict:
    smtp = _smtp_server(env.text("SMTP_URL"))
    mail_from = env.text("MAIL_FROM")
    if smtp is not None and mail_from is None:
        raise ConfigError("MAIL_FROM: must be set when SMTP_URL is (the address Tender's mail comes from)")
    if mail_from is not None and not re.fullmatch(r"(?:[^<>\r\n\x00]{0,100}<)?[^@\s<>\x00]{1,64}@[A-Za-z0-9.-]{1,253}>?",
                                                  mail_from):
        raise ConfigError(f"MAIL_FROM: must be an address, or a name and <address> (got {mail_from!r})")
    timeout = env.integer("MAIL_TIMEOUT_SECONDS", default.mail_timeout_seconds, minimum=1, maximum=300)
    claim = env.integer("MAIL_CLAIM_SECONDS", default.mail_claim_seconds, minimum=2, maximum=3600)
    if claim <= 2 * timeout:
        # A lease shorter than an exchange would let a second worker send the same mail at once.
        raise ConfigError(f"MAIL_CLAIM_SECONDS: must be more than twice MAIL_TIMEOUT_SECONDS ({timeout}), got {claim}")
    return {"smtp": smtp, "mail_from": mail_from or default.mail_from, "mail_timeout_seconds": timeout,
            "mail_claim_seconds": claim,
            "mail_retry_schedule": env.seconds_list("MAIL_RETRY_SCHEDULE", default.mail_retry_schedule)}


def _smtp_server(value: str | None) -> SmtpServer | None:
    """SMTP_URL: smtp://user:pass@host:587 (STARTTLS required unless ?starttls=0) or smtps://… (implicit TLS)."""
    if value is None:
        return None
    problem = f"SMTP_URL: must be smtp://user:password@host:587 or smtps://user:password@host:465 (got {redact(value)!r})"
    parts = urlsplit(value)
    query = parse_qs(parts.query, keep_blank_values=True)
    try:
        port = parts.port
    except ValueError:
        raise ConfigError(problem) from None
    if (parts.scheme not in ("smtp", "smtps") or not parts.hostname or parts.path not in ("", "/")
            or set(query) - {"starttls"} or query.get("starttls", ["1"]) not in (["0"], ["1"])
            or (parts.scheme == "smtps" and "starttls" in query)):
        raise ConfigError(problem)
    if parts.scheme == "smtps":
        security = "tls"
    else:
        security = "none" if query.get("starttls") == ["0"] else "starttls"
    return SmtpServer(host=parts.hostname, port=port or (465 if security == "tls" else 587), security=security,
                      username=unquote(parts.username) if parts.username else None,
                      password=unquote(parts.password) if parts.password else None)
