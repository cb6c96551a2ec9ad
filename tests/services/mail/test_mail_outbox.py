"""The mail outbox against a real SMTP server: sent once, retried on 4xx and dropped connections,
failed on 5xx with the server's answer, slow servers cut at the deadline."""
from __future__ import annotations

import pytest

from models.base import db
from models.mail import Mail
from tests.services.mail.conftest import queue, send


def _row(to):
    with db.connection_context():
        return Mail.get(Mail.recipient == to)


def test_a_mail_is_sent_once_over_starttls_and_auth_with_its_headers(app, smtp, sending):
    assert queue(to="ann@example.com")
    assert not queue(to="ann@example.com")           # the same fact again: no second mail
    counts = send(sending)
    assert (counts.sent, counts.retrying, counts.failed) == (1, 0, 0)
    assert send(sending).sent == 0                   # nothing left due
    [received] = smtp.to("ann@example.com")
    message, row = received.message, _row("ann@example.com")
    assert message["Message-ID"] == row.message_id
    assert message["Auto-Submitted"] == "auto-generated" and message["Date"]
    assert message["Subject"] == "Reset your Tender password"
    assert [part.get_content_type() for part in message.iter_parts()] == ["text/plain", "text/html"]
    assert row.status == "sent" and row.attempts == 1 and row.last_answer.startswith("250")


@pytest.mark.parametrize("answers", [["421 4.7.0 Try again later"], ["drop"], ["421 4.3.2 Busy", "drop"]])
def test_a_4xx_or_a_dropped_connection_is_retried_and_then_sent(app, smtp, sending, answers):
    smtp.script.answers["bob@example.com"] = list(answers)
    queue(to="bob@example.com")
    for _ in answers:
        assert send(sending).retrying == 1
        assert _row("bob@example.com").status == "pending"
    assert send(sending).sent == 1
    row = _row("bob@example.com")
    assert row.status == "sent" and row.attempts == len(answers) + 1
    assert len(smtp.to("bob@example.com")) == 1


def test_a_retry_waits_for_its_back_off(app, smtp, sending):
    import dataclasses
    smtp.script.answers["bob@example.com"] = ["421 4.7.0 Try again later"]
    queue(to="bob@example.com")
    assert send(dataclasses.replace(sending, retry_schedule=(60, 300))).retrying == 1
    assert send(sending).sent == 0                    # due in a minute, not now
    row = _row("bob@example.com")
    assert row.last_answer == "421 4.7.0 Try again later"
    assert 55 <= (row.next_attempt_at - row.updated_at).total_seconds() <= 60


def test_a_550_fails_at_once_with_the_servers_answer(app, smtp, sending):
    smtp.script.answers["nobody@example.com"] = ["550 5.1.1 No such user here"]
    queue(to="nobody@example.com")
    assert send(sending).failed == 1
    row = _row("nobody@example.com")
    assert row.status == "failed" and row.attempts == 1 and row.last_answer == "550 5.1.1 No such user here"
    assert send(sending).sent == 0 and smtp.to("nobody@example.com") == []
    runner = app.test_cli_runner()                    # the operator fixed it: sent again, from its first attempt
    retried = runner.invoke(args=["mail", "retry", row.public_id])
    assert retried.exit_code == 0 and "1 mail(s) queued again" in retried.output
    assert "0 mail(s)" in runner.invoke(args=["mail", "retry", row.public_id]).output    # pending now: untouched
    assert send(sending).sent == 1 and len(smtp.to("nobody@example.com")) == 1
    assert _row("nobody@example.com").attempts == 1


def test_the_last_retry_marks_it_failed(app, smtp, sending):
    smtp.script.answers["bob@example.com"] = ["421 4.7.0 Busy"] * 6
    queue(to="bob@example.com")
    for _ in range(5):
        assert send(sending).retrying == 1
    assert send(sending).failed == 1                  # the sixth attempt: 1 + five retries
    row = _row("bob@example.com")
    assert row.status == "failed" and row.attempts == 6 and row.last_answer == "421 4.7.0 Busy"


def test_a_stalling_server_is_cut_at_the_deadline_without_holding_other_mail(app, smtp, sending):
    smtp.script.answers["slow@example.com"] = ["stall"]
    queue(to="slow@example.com")
    for index in range(3):
        queue(to=f"quick{index}@example.com")
    counts = send(sending)
    assert (counts.sent, counts.retrying) == (3, 1)
    row = _row("slow@example.com")
    assert row.status == "pending" and row.last_answer == "timeout: no complete answer within 3 s"
    # The quick ones were taken while the slow one's exchange was still stalled.
    assert smtp.attempts.index("slow@example.com") >= 0 and smtp.received[0].recipient.startswith("quick")


def test_a_mail_the_server_took_before_the_connection_broke_is_resent_with_its_message_id(app, smtp, sending):
    """The window no client can close: the server has the message, its answer never arrives."""
    smtp.script.answers["ann@example.com"] = ["accept-then-drop"]
    queue(to="ann@example.com")
    assert send(sending).retrying == 1
    assert send(sending).sent == 1
    first, again = smtp.to("ann@example.com")
    assert first.message["Message-ID"] == again.message["Message-ID"] == _row("ann@example.com").message_id
    assert first.raw == again.raw
