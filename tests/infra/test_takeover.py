"""Claims of a process that dies are taken over within seconds, and the work is done exactly once
(docs/operations.md#processes-that-die): a real process takes the claim, starts its work, and is
killed with SIGKILL (tests/support/claim_holder.py), as a host lost mid-request would be."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
import os
import select
import signal
import subprocess
import sys
import time

import pytest

import jobs
from core.clock import utcnow
from core.errors import Conflict
from infra import idempotency
from models.base import db, is_postgres
from models.invoices import Invoice
from models.payment_links import IdempotencyKey
from tests import factories
from tests.factories import make_store
from tests.payflow import event_types, reload
from tests.support.claim_holder import PaidProvider, new_invoice, poll_once
from tests.support.polling import wait_for
from tests.support.processes import ROOT

BUDGET_SECONDS = 15          # what a lost host may cost a client's retry (docs/retries.md)
LAPSE = dt.timedelta(seconds=2)


def start_holder(test_env, *args, holding=None, **env) -> subprocess.Popen:
    """The claim holder (tests/support/claim_holder.py) with `args`, once it holds its claim: when it
    says so, or when `holding()` says so."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("TEST_", "PYTEST"))}
    environment.update(test_env, PYTHONPATH=str(ROOT), LOG_LEVEL="WARNING", **env)
    holder = subprocess.Popen([sys.executable, "-m", "tests.support.claim_holder", *args], cwd=ROOT, env=environment,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        if holding is None:
            assert line_of(holder) == "holding"
        else:
            holding()
    except BaseException:
        holder.kill()
        holder.wait(10)
        raise
    return holder


def line_of(holder: subprocess.Popen, timeout: float = 60) -> str:
    """The holder's next line, or fail after `timeout` (a holder that hangs must not hang the run)."""
    ready, _, _ = select.select([holder.stdout], [], [], timeout)
    assert ready, f"the claim holder said nothing for {timeout} s"
    return holder.stdout.readline().strip()


def retry(store, key):
    """The client's retry: same key, same request; its work creates an invoice too."""
    def work():
        return 201, {"id": new_invoice(store, utcnow()).public_id}

    with db.connection_context():
        return idempotency.run(store, key, idempotency.fingerprint("POST /test", {}), work, now=utcnow())


def refused(store, key) -> bool:
    try:
        retry(store, key)
    except Conflict as refusal:
        assert refusal.code == "idempotency_key_in_use"
        return True
    return False


def invoice_ids() -> list[str]:
    with db.connection_context():
        return [invoice.public_id for invoice in Invoice.select()]


@pytest.fixture
def lapse(monkeypatch):
    monkeypatch.setattr(idempotency, "ABANDONED_AFTER", LAPSE)


def test_a_request_killed_mid_work_is_retried_within_the_budget_exactly_once(app, test_env, monkeypatch):
    store = make_store()
    holder = start_holder(test_env, "idempotency", str(store.id), "order-7", "0.2")
    try:
        if is_postgres():
            monkeypatch.setattr(idempotency, "ABANDONED_AFTER", LAPSE)      # a shorter watch than the real lapse
            # Alive, it renews its claim: retries are refused for longer than the claim would last unrenewed.
            # (On SQLite its transaction holds the write lock, so a retry would wait for it instead.)
            refusals_until = time.monotonic() + 1.5 * LAPSE.total_seconds()
            while time.monotonic() < refusals_until:
                assert refused(store, "order-7")
                time.sleep(0.1)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
    monkeypatch.undo()          # dead, its claim lapses after the real ABANDONED_AFTER, within the budget
    outcome = wait_for(lambda: None if refused(store, "order-7") else retry(store, "order-7"),
                       timeout=BUDGET_SECONDS, what="the retry to take over the dead request's claim", interval=0.2)
    assert outcome.status == 201
    assert invoice_ids() == [outcome.body["id"]]          # the dead request's work never committed
    again = retry(store, "order-7")
    assert (again.replayed, again.body) == (True, outcome.body)


@pytest.mark.skipif(not os.environ.get("TEST_DATABASE_URL", "").startswith("postgres"),
                    reason="SQLite: a take-over waits for the holder's write lock, so it cannot overlap")
def test_a_holder_whose_claim_was_taken_over_keeps_nothing(app, test_env, lapse):
    """A holder alive but silent (no heartbeats: a stalled process) loses its claim to a retry; when it
    finishes after all, its work is rolled back, and only the retry's is kept."""
    store = make_store()
    holder = start_holder(test_env, "idempotency", str(store.id), "order-8", "0")
    try:
        outcome = wait_for(lambda: None if refused(store, "order-8") else retry(store, "order-8"),
                           timeout=BUDGET_SECONDS, what="the retry to take over the silent claim", interval=0.2)
        holder.stdin.write("finish\n")
        holder.stdin.flush()
        assert line_of(holder) == "refused idempotency_key_in_use"
    finally:
        holder.kill()
        holder.wait(10)
    assert invoice_ids() == [outcome.body["id"]]
    with db.connection_context():
        assert IdempotencyKey.get().status == "complete"


def test_a_poller_killed_mid_batch_leaves_its_invoices_to_another_within_seconds(app, settings, test_env):
    """The lease of a poll claim is renewed while the poller asks the provider, and lapses soon after
    it is killed: another poller then finishes the work, and the invoice is paid exactly once."""
    jobs.use_runtime(settings)
    now = utcnow()
    invoice = factories.make_invoice(make_store(), now=now - dt.timedelta(minutes=1), status="awaiting_payment",
                                     deposit_address="held", origin_asset="usdc.eth", refund_to="buyer",
                                     amount_due=Decimal("10.05"), quoted_at=now, provider_status="PENDING_DEPOSIT",
                                     next_poll_at=now - dt.timedelta(seconds=1))
    lease = 1.5
    holder = start_holder(test_env, "poll", str(lease), "0.2")
    try:
        if is_postgres():       # alive, it keeps its lease: nothing to claim for longer than the lease
            watch_until = time.monotonic() + 1.5 * lease
            while time.monotonic() < watch_until:
                assert poll_once(PaidProvider(), lease_seconds=lease) == 0
                time.sleep(0.1)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
    wait_for(lambda: poll_once(PaidProvider(), lease_seconds=lease), timeout=BUDGET_SECONDS,
             what="another poller to take over the dead poller's invoice", interval=0.2)
    assert (reload(invoice).status, event_types(invoice).count("invoice.paid")) == ("paid", 1)
