"""Mail through the Procfile's real `worker` and `scheduler` processes on PostgreSQL and Redis, to a
real SMTP server in this process (STARTTLS, AUTH), with a worker killed by SIGKILL mid-send.
Skipped unless TEST_DATABASE_URL and TEST_REDIS_URL are set."""
from __future__ import annotations

import signal
import subprocess
import time

import pytest
from rq import Worker

from core.clock import utcnow
from infra import heartbeats
from models.base import db
from models.mail import Mail
from scheduler.schedule import MAIL_SWEEP_SECONDS
from services.mail import mail_outbox
from tests.support.polling import wait_for
from tests.support.processes import (DATABASE_URL, REDIS_URL, ROOT, observer_redis, procfile_command, real_stack_env,
                                     stop)
from tests.support.smtp_server import Script, SmtpServer
from tests.support.tls_certificates import LocalCA

pytestmark = pytest.mark.skipif(not (DATABASE_URL and REDIS_URL),
                                reason="needs TEST_DATABASE_URL and TEST_REDIS_URL (the real stack)")


def _queue(to: str) -> None:
    with db.connection_context():
        mail_outbox.queue_mail("password_reset", to, {"store_name": "E2E shop", "url": "https://tender.test/r/x",
                                                      "expires_at": "2026-01-01T00:00:00Z"},
                               dedupe_key=f"reset:{to}", now=utcnow())


def _row(to: str) -> Mail:
    with db.connection_context():
        return Mail.get(Mail.recipient == to)


# A dead worker's claim lapses at most a lease after its last renewal (itself at most a beat before
# the kill); the next sweep then sends its mail. The rest is slack for this loaded machine. Before
# mail claims were renewed, they lapsed only after MAIL_CLAIM_SECONDS (120 s by default).
TAKEOVER_BOUND_SECONDS = heartbeats.RENEWED_LEASE_SECONDS + heartbeats.INTERVAL_SECONDS + MAIL_SWEEP_SECONDS + 6


def _registered(process: subprocess.Popen) -> bool:
    """Is this rq worker in its loop (registered in Redis), ready to take a job?"""
    return any(worker.pid == process.pid for worker in Worker.all(connection=observer_redis()))


def test_a_worker_killed_before_or_after_the_server_took_a_mail_loses_none_and_doubles_only_the_unclosable_one(
        app, tmp_path):
    ca = LocalCA(tmp_path)
    smtp = SmtpServer(ca.server("localhost"), script=Script(stall_seconds=90)).start()
    # MAIL_CLAIM_SECONDS keeps its default (120 s): the take-over below must not wait for it.
    env = real_stack_env(SMTP_URL=smtp.url, MAIL_FROM="Tender <mail@tender.test>", MAIL_TIMEOUT_SECONDS="45",
                         MAIL_RETRY_SCHEDULE="1,1,1,1,1", SSL_CERT_FILE=ca.bundle)
    started: list[subprocess.Popen] = []

    def start(name):
        process = subprocess.Popen(procfile_command(name), cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
        started.append(process)
        return process

    try:
        first = start("worker")
        start("scheduler")          # its sweep re-finds mail whose job died with the worker
        _queue("early@example.com")
        wait_for(lambda: _row("early@example.com").status == "sent", timeout=30, what="the first mail sent")

        smtp.script.answers["before@example.com"] = ["stall"]                # killed before the server took it
        smtp.script.answers["after@example.com"] = ["accept-then-stall"]     # killed after: the unclosable window
        with db.connection_context(), db.atomic():      # one commit: one run claims both
            _queue("before@example.com")
            _queue("after@example.com")
        wait_for(lambda: "before@example.com" in smtp.attempts and smtp.to("after@example.com"), timeout=30,
                 what="both exchanges under way", interval=0.02)
        second = start("worker")        # ready before the kill: the take-over measured is the claim's lapse
        wait_for(lambda: _registered(second), timeout=40, what="the second worker to be ready")
        assert smtp.attempts.count("before@example.com") == 1        # still stalled in the first worker
        stop(first, signal.SIGKILL)
        killed_at = time.monotonic()

        wait_for(lambda: {_row(to).status for to in ("before@example.com", "after@example.com")} == {"sent"},
                 timeout=TAKEOVER_BOUND_SECONDS, what="the other worker to take both over", interval=0.05)
        print(f"mail take-over after SIGKILL: {time.monotonic() - killed_at:.1f} s "
              f"(bound {TAKEOVER_BOUND_SECONDS:.0f} s)")
        assert len(smtp.to("early@example.com")) == 1 and _row("early@example.com").attempts == 1
        assert len(smtp.to("before@example.com")) == 1
        copies = smtp.to("after@example.com")
        assert len(copies) == 2                                             # the one resend there can be
        assert copies[0].message["Message-ID"] == copies[1].message["Message-ID"] == _row("after@example.com").message_id
        assert copies[0].raw == copies[1].raw                               # the same bytes, every attempt
        assert _row("after@example.com").attempts == 2
    finally:
        for process in started:
            stop(process, signal.SIGTERM, grace=10)
        smtp.stop()
