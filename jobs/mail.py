"""Queue `mail` (docs/email.md#how-mail-is-sent): sending due mail. Nudged after a mail's transaction
commits, and run by the scheduler every few seconds, which is what re-finds mail whose nudge was
lost and retries whose time has come. Safe to run twice or at once: mail is claimed from the database."""
from __future__ import annotations

from core.clock import utcnow
from infra import nudges
from jobs import ensure_runtime, measured
from models.base import db
from services.mail import mail_outbox, notices


@measured
def send_due(max_seconds: float = 20.0) -> dict:
    settings = ensure_runtime()
    nudges.run_started(mail_outbox.SEND_JOB)      # before looking: later mail nudges a new run
    with db.connection_context():
        counts = mail_outbox.send_due(mail_outbox.Sending.from_settings(settings), max_seconds=max_seconds)
    return {"sent": counts.sent, "retrying": counts.retrying, "failed": counts.failed}


@measured
def sweep_notices() -> int:
    """Mail about what time alone brings about: an endpoint failing for an hour, a refund's funding
    about to expire (services/mail/notices.py)."""
    ensure_runtime()
    with db.connection_context():
        return notices.sweep(now=utcnow())
