"""The mail outbox (docs/email.md#how-mail-is-sent): `queue_mail` writes a rendered mail row inside
the caller's transaction; `send_due` (the `mail` queue's job) claims due rows, sends them, and
records what the server answered.

A mail is claimed with a lease (infra/claims.claim_due), so two workers never send it at once,
and its attempt is counted by the claim itself. On PostgreSQL the lease is short and renewed every
second while the run holds the mail (claims.keep_leased, infra/heartbeats.py), as polls and webhook
deliveries are: a worker killed mid-send leaves a row whose lease lapses seconds later, and the next
run sends it again, with the same bytes and `Message-ID`. That resend is the one duplicate possible
(the server took the mail, the worker died before recording it): a receiving system drops it by its
`Message-ID`. Where nothing renews (SQLite, one process) the lease is `MAIL_CLAIM_SECONDS`, more
than twice an exchange's deadline, so it outlasts the exchange it covers.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, as_completed, wait
import datetime as dt
from dataclasses import dataclass
import logging
import time

from core import email_addresses, ids
from core.clock import utcnow
from infra import claims, heartbeats, nudges
from models.mail import Mail
from services.mail import compose, smtp_sending

log = logging.getLogger("tender.mail")

QUEUE = "mail"
SEND_JOB = "jobs.mail.send_due"
SENDING_THREADS = 8              # one slow server answer never holds the other mails of a run
_sender = {"address": "Tender <tender@localhost>", "domain": "localhost"}


def configure(mail_from: str) -> None:
    """Set once at start-up (bootstrap.init_runtime): where mail comes from, and the Message-ID domain."""
    _sender["address"] = mail_from
    _sender["domain"] = mail_from.rsplit("@", 1)[1].rstrip(">").strip().lower()


def queue_mail(kind: str, recipient: str, context: dict, *, dedupe_key: str, now: dt.datetime,
               audience: str = "user", store_id=None) -> bool:
    """Queue one mail of `kind` (a template in services/mail/templates/) to `recipient`, rendered
    now with `context`. Call inside the transaction of the fact it reports: it is sent once that
    commits, never if it rolls back. A second call with the same `dedupe_key` writes nothing (the
    same fact reported again). Returns whether a mail was queued. The dashboard's invitations and
    password resets call this too."""
    problem = email_addresses.address_problem(recipient)
    if problem:
        raise ValueError(f"recipient: {problem}")
    if Mail.select(Mail.id).where(Mail.dedupe_key == dedupe_key[:400]).exists():
        return False        # reported before: skip the rendering (the unique key would refuse it anyway)
    subject, text, html = compose.render(kind, context)
    public_id = ids.new_public_id("mail_")
    row = dict(id=ids.new_uuid(), public_id=public_id, store=store_id, kind=kind, audience=audience,
               recipient=email_addresses.normalized(recipient), dedupe_key=dedupe_key[:400],
               message_id=f"<{public_id}@{_sender['domain']}>", subject=subject, text_body=text, html_body=html,
               status="pending", attempts=0, next_attempt_at=now, created_at=now, updated_at=now)
    inserted = Mail.insert(row).on_conflict_ignore().as_rowcount().execute()
    if inserted:
        nudges.nudge(QUEUE, SEND_JOB)
    return bool(inserted)


@dataclass(frozen=True)
class Sending:
    """How this process sends: the SMTP server (None: to the log), the deadline, lease and retries.
    `lease_seconds` is the lease where nothing renews it; `renewed`: runs renew their claims
    (heartbeats), so a claim lasts `claim_seconds`, a few seconds unrenewed."""
    smtp: object
    timeout_seconds: int
    lease_seconds: int
    retry_schedule: tuple[int, ...]
    tls_context: object = None          # tests trust their own certificate authority
    renewed: bool = False

    @property
    def claim_seconds(self) -> int:
        return min(self.lease_seconds, heartbeats.RENEWED_LEASE_SECONDS) if self.renewed else self.lease_seconds

    @classmethod
    def from_settings(cls, settings, **extra) -> "Sending":
        return cls(settings.smtp, settings.mail_timeout_seconds, settings.mail_claim_seconds,
                   settings.mail_retry_schedule, renewed=heartbeats.renewing(), **extra)


@dataclass
class Counts:
    sent: int = 0
    retrying: int = 0
    failed: int = 0


def send_due(sending: Sending, *, max_seconds: float = 20.0, clock=None) -> Counts:
    """Claim and send due mail, `SENDING_THREADS` at a time, until none is due or `max_seconds`
    have passed (a run then ends within one exchange's deadline of that). A claim takes no more
    than the threads send at once, so every mail it holds is sent within one deadline. The claim
    is renewed until every answer is recorded (PostgreSQL), or else outlasts twice that deadline:
    no second worker can take a mail still being sent."""
    clock = clock or utcnow
    counts, began = Counts(), time.monotonic()
    with ThreadPoolExecutor(SENDING_THREADS, thread_name_prefix="mail") as pool:
        while time.monotonic() - began < max_seconds:
            claimed_at = clock()
            token, rows = _claim(sending, now=claimed_at, limit=SENDING_THREADS)
            if not rows:
                break
            leased = claims.keep_leased(Mail, token, claimed_at=claimed_at, lease_seconds=sending.claim_seconds)
            attempts = {}
            try:
                # Each answer is recorded as it comes: a quick mail's is not kept waiting on a slow one's
                # deadline, which would widen the window where a dead worker's sent mail goes out again.
                attempts = {pool.submit(_attempt, sending, row): row for row in rows}
                for done in as_completed(attempts):
                    _record(sending, attempts[done], token, done.result(), now=clock(), counts=counts)
            finally:
                wait(attempts)      # after an error too: no exchange goes on once its claim is not renewed
                leased.stop()
            if len(rows) < SENDING_THREADS:
                break
    return counts


def _claim(sending: Sending, *, now: dt.datetime, limit: int) -> tuple[str, list]:
    due = (Mail.status == "pending") & (Mail.next_attempt_at <= now)
    return claims.claim_due(Mail, due, order_by=[Mail.next_attempt_at], now=now, lease_seconds=sending.claim_seconds,
                            limit=limit, changes={"attempts": Mail.attempts + 1})


def _attempt(sending: Sending, row: Mail) -> smtp_sending.Answer:
    """One exchange for `row` (a sending thread: no database here)."""
    if row.attempts > len(sending.retry_schedule) + 1:      # its senders kept dying: stop sending it
        return smtp_sending.Answer("failed", "gave up: every worker sending it stopped before recording an answer")
    if sending.smtp is None:
        log.info("mail %s to %s (no SMTP_URL: kept in the outbox, `flask mail outbox` lists it)", row.public_id,
                 row.recipient, extra={"fields": {"mail": row.public_id, "kind": row.kind, "to": row.recipient,
                                                  "subject": row.subject, "message_id": row.message_id,
                                                  "text": row.text_body}})
        return smtp_sending.Answer("logged", "written to the log (no SMTP_URL)")
    try:
        message = compose.message(sender=_sender["address"], recipient=row.recipient, subject=row.subject,
                                  text=row.text_body, html=row.html_body, message_id=row.message_id,
                                  date=row.created_at)
        return smtp_sending.send(sending.smtp, message.as_bytes(), sender=_envelope_sender(), recipient=row.recipient,
                                 timeout=sending.timeout_seconds, tls_context=sending.tls_context)
    except Exception as error:      # a bug of ours or of a library: still this attempt's answer
        log.exception("mail %s: attempt %s failed unexpectedly", row.public_id, row.attempts)
        return smtp_sending.Answer("retry", f"failed while sending: {type(error).__name__}")


def _envelope_sender() -> str:
    address = _sender["address"]
    return address.rsplit("<", 1)[1].rstrip(">").strip() if "<" in address else address


def _record(sending: Sending, row: Mail, token: str, answer: smtp_sending.Answer, *, now: dt.datetime,
            counts: Counts) -> None:
    changes = {"last_answer": answer.detail, "updated_at": now}
    if answer.outcome in ("sent", "logged"):
        changes.update(status="sent" if answer.outcome == "sent" else "logged", sent_at=now)
        counts.sent += 1
    elif answer.outcome == "retry" and row.attempts <= len(sending.retry_schedule):
        changes["next_attempt_at"] = now + dt.timedelta(seconds=sending.retry_schedule[row.attempts - 1])
        counts.retrying += 1
    else:
        changes["status"] = "failed"
        counts.failed += 1
    if not claims.release(Mail, row.id, token, **changes):
        log.warning("mail %s: lease lost before its answer was recorded (%s)", row.public_id, answer.detail)
    log.info("mail %s %s: %s", row.public_id, changes.get("status", "retrying"), answer.detail,
             extra={"fields": {"mail": row.public_id, "kind": row.kind, "attempt": row.attempts,
                               "outcome": answer.outcome}})


def has_due(*, now: dt.datetime) -> bool:
    return Mail.select(Mail.id).where((Mail.status == "pending") & (Mail.next_attempt_at <= now)).limit(1).exists()


def listing(*, limit: int = 50, status: str | None = None) -> list[dict]:
    """The newest mail first, as `flask mail outbox` shows it."""
    query = Mail.select().order_by(Mail.created_at.desc()).limit(limit)
    if status:
        query = query.where(Mail.status == status)
    return [{"id": mail.public_id, "created_at": mail.created_at.isoformat() + "Z", "kind": mail.kind,
             "to": mail.recipient, "subject": mail.subject, "status": mail.status, "attempts": mail.attempts,
             "last_answer": mail.last_answer, "message_id": mail.message_id} for mail in query]


def shown(public_id: str) -> str | None:
    """One mail's headers and plain text, as the operator reads it."""
    mail = Mail.get_or_none(Mail.public_id == public_id)
    if mail is None:
        return None
    headers = [f"Message-ID: {mail.message_id}", f"To: {mail.recipient}", f"Subject: {mail.subject}",
               f"Status: {mail.status} after {mail.attempts} attempt(s); last answer: {mail.last_answer or '-'}"]
    return "\n".join(headers) + "\n\n" + mail.text_body


def retry_failed(public_ids: list[str], *, now: dt.datetime) -> int:
    """Send failed mail again, from its first attempt (an operator fixed what the server refused).
    Only `failed` mail: it was never accepted, so this cannot double one. Returns how many."""
    return Mail.update(status="pending", attempts=0, next_attempt_at=now, updated_at=now).where(
        Mail.public_id.in_(public_ids) & (Mail.status == "failed")).execute()
