"""Without SMTP_URL (the embedded default) mail is written to the log and kept; `flask mail outbox`
lists it and shows one."""
import json
import logging

from services.mail import mail_outbox
from tests.services.mail.conftest import queue, send


def test_without_an_smtp_server_mail_is_logged_kept_and_listed(app, caplog):
    logged = mail_outbox.Sending(None, timeout_seconds=3, lease_seconds=30, retry_schedule=(0,))
    queue(to="ann@example.com")
    with caplog.at_level(logging.INFO, logger="tender.mail"):
        assert send(logged).sent == 1
    [line] = [record for record in caplog.records if getattr(record, "fields", {}).get("to") == "ann@example.com"]
    assert "Reset your Tender password" in line.fields["subject"] and "Open the link" in line.fields["text"]

    runner = app.test_cli_runner()
    listed = runner.invoke(args=["mail", "outbox", "--json"])
    assert listed.exit_code == 0, listed.output
    [row] = json.loads(listed.output)
    assert (row["to"], row["status"], row["kind"]) == ("ann@example.com", "logged", "password_reset")
    text = runner.invoke(args=["mail", "outbox"]).output
    assert row["id"] in text and "1 mail(s)" in text
    shown = runner.invoke(args=["mail", "outbox", "--show", row["id"]])
    assert shown.exit_code == 0 and f"Message-ID: {row['message_id']}" in shown.output
    assert "https://tender.test/r/abc" in shown.output
    assert runner.invoke(args=["mail", "outbox", "--show", "mail_nope"]).exit_code == 1
