"""Mail claims (docs/email.md#how-mail-is-sent): a living sender keeps the mail it is sending, a dead
one's claim lapses within seconds on PostgreSQL (renewed by infra/heartbeats.py, like polls and
deliveries), and workers sending at once never send one mail twice."""
from __future__ import annotations

import dataclasses
import datetime as dt
import threading
import time


from core.clock import utcnow
from infra import heartbeats
from models.base import db, is_postgres
from models.mail import Mail
from services.mail import mail_outbox
from tests.services.mail.conftest import queue, send
from tests.support.polling import wait_for


def _row(to):
    with db.connection_context():
        return Mail.get(Mail.recipient == to)


def _claim_now(sending, now=None):
    with db.connection_context():
        return mail_outbox._claim(sending, now=now or utcnow(), limit=mail_outbox.SENDING_THREADS)[1]


def test_a_dead_senders_claim_lapses_within_seconds_on_postgresql(app, settings, smtp):
    """A claim nobody renews (its worker was killed right after claiming) is free again a renewed
    lease later on PostgreSQL, not after MAIL_CLAIM_SECONDS; on SQLite nothing renews, so it lasts that."""
    sending = mail_outbox.Sending.from_settings(settings)
    assert sending.renewed == is_postgres()
    queue(to="ann@example.com")
    claimed_at = utcnow()
    [row] = _claim_now(sending, claimed_at)            # and then the worker "dies": no renewal, no answer
    lease = (row.claimed_until - claimed_at).total_seconds()
    assert lease == (heartbeats.RENEWED_LEASE_SECONDS if is_postgres() else settings.mail_claim_seconds)
    assert lease < settings.mail_claim_seconds or not is_postgres()
    assert _claim_now(sending, claimed_at + dt.timedelta(seconds=lease - 0.5)) == []
    [again] = _claim_now(sending, claimed_at + dt.timedelta(seconds=lease + 0.5))
    assert (again.recipient, again.attempts) == ("ann@example.com", 2)


def test_a_living_sender_keeps_its_mail_past_the_lease_while_the_exchange_runs(app, smtp, sending, monkeypatch):
    """The run renews its claim every beat until the answer is recorded: another claimer finds nothing
    for longer than the lease, and the slow exchange's answer is recorded under the claim."""
    monkeypatch.setattr(heartbeats, "RENEWED_LEASE_SECONDS", 2)
    monkeypatch.setattr(heartbeats, "INTERVAL_SECONDS", 0.2)
    sending = dataclasses.replace(sending, timeout_seconds=6, lease_seconds=30, retry_schedule=(60,),
                                  renewed=heartbeats.renewing())
    smtp.script.answers["slow@example.com"] = ["stall"]
    queue(to="slow@example.com")
    run = threading.Thread(target=send, args=(sending,))
    run.start()
    try:
        wait_for(lambda: "slow@example.com" in smtp.attempts, timeout=10, what="the slow exchange under way")
        watch_until = time.monotonic() + 1.5 * heartbeats.RENEWED_LEASE_SECONDS     # inside the 6 s exchange
        while time.monotonic() < watch_until:
            assert _claim_now(sending) == []            # held past its 2 s lease: renewed
            time.sleep(0.1)
    finally:
        run.join(30)
    row = _row("slow@example.com")
    assert (row.attempts, row.claim_token) == (1, None)
    assert row.last_answer == "timeout: no complete answer within 6 s"    # recorded: the claim was still its own


def test_workers_sending_at_once_send_each_mail_exactly_once(app, smtp, sending):
    """Four runs (as four workers would) claim the same due rows at the same moment."""
    recipients = [f"buyer{index}@example.com" for index in range(40)]
    with db.connection_context(), db.atomic():
        for to in recipients:
            assert queue(to=to)
    start = threading.Barrier(4)
    totals, errors = [], []

    def worker():
        try:
            start.wait(10)
            totals.append(send(sending).sent)
        except Exception as error:          # reported below, not lost in the thread
            errors.append(error)
    runs = [threading.Thread(target=worker) for _ in range(4)]
    for run in runs:
        run.start()
    for run in runs:
        run.join(60)
    assert errors == []
    assert sum(totals) == len(recipients)
    assert sorted(received.recipient for received in smtp.received) == sorted(recipients)
    with db.connection_context():
        assert {(mail.status, mail.attempts) for mail in Mail.select()} == {("sent", 1)}
    if is_postgres():
        assert sum(1 for total in totals if total) > 1      # the runs really shared the work
