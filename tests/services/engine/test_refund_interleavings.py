"""Random interleavings of a merchant's refunds of one invoice, through the API and the real
pollers and sweeps: creates, cancels, funding (whole, short, too large, failed, late), funding
windows closing, retries, and callers racing each other. Whatever the order, the refunds never
deliver more than the invoice received, and every book agrees (docs/refunds.md#money-rules)."""
import dataclasses
import datetime as dt
from decimal import Decimal
import itertools

from hypothesis import HealthCheck, example, given, settings as hyp_settings, strategies as st
import pytest

from core.clock import utcnow
from models.base import db
from models.invoices import Invoice
from models.refunds import Refund
from models.sandbox import SandboxDeposit
from models.transactions import Transaction
from tests.payflow import poll_until_quiet
from tests.services.engine.test_refunds import close_funding_windows, paid_invoice
from tests.support.concurrency import run_at_once
from tests.support.refund_books import assert_refund_books_agree
from tests.support.statement_oracle import roll_up_checked_after_each_test

roll_up_checked = pytest.fixture(autouse=True)(roll_up_checked_after_each_test)


@pytest.fixture
def unlimited_writes(app, settings, monkeypatch):
    """Every example is a merchant's busy minute: the per-key write limit is not what is tested here."""
    monkeypatch.setitem(app.extensions, "tender.settings",
                        dataclasses.replace(settings, rate_limit_write_per_minute=1_000_000))

which = st.integers(min_value=0, max_value=3)        # the n-th refund created so far (modulo how many)
steps = st.lists(st.one_of(
    st.tuples(st.just("create"), st.sampled_from(["3.00", "5.00", "10.00", "10.00"])),
    st.tuples(st.just("cancel"), which),
    st.tuples(st.just("fund"), which, st.sampled_from(["success", "short", "failed", "large"])),
    st.tuples(st.just("late_fund"), which),
    st.tuples(st.just("deadline"), which),
    st.tuples(st.just("poll")),
    st.tuples(st.just("retry")),
    st.tuples(st.just("race"), which),
), min_size=1, max_size=10)
_keys = itertools.count()
SANDBOX_STEPS = 4
FUNDING = {"success": {}, "short": {"outcome": "short"}, "failed": {"outcome": "failed"}, "large": {"amount": "12"}}


class Merchant:
    """One invoice's merchant, calling the API as a client would; remembers its last call to retry it."""

    def __init__(self, app, auth, invoice_id):
        self.app, self.auth, self.invoice_id = app, auth, invoice_id
        self.refunds: list[str] = []
        self.last = None

    def call(self, path, body=None, *, key=None):
        """POST with an Idempotency-Key (`key=False`: without one). A 503 is a documented answer
        (the provider did not answer a cancel in time: retry), never a 500."""
        headers = dict(self.auth)
        if key is not False:
            headers["Idempotency-Key"] = key = key or f"k{next(_keys)}"
        with self.app.test_client() as client:
            response = client.post(path, json=body or {}, headers=headers)
        assert response.status_code < 500 or response.json["error"]["code"] == "provider_unavailable", response.json
        self.last = (path, body, key, response.status_code, response.json)
        if response.status_code == 201 and response.json["id"].startswith("ref_"):
            self.refunds.append(response.json["id"])
        return response

    def pick(self, n):
        return self.refunds[n % len(self.refunds)] if self.refunds else None

    def create(self, amount):
        return self.call(f"/v1/invoices/{self.invoice_id}/refunds", {"amount": amount})

    def cancel(self, refund_id):
        # Without a key: on SQLite a keyed request holds the write lock while the cancel asks the
        # sandbox, whose status read writes, so the ask would wait out its 3 s (then 503).
        return self.call(f"/v1/refunds/{refund_id}/cancel", key=False)

    def fund(self, refund_id, how="success"):
        return self.call(f"/v1/test_helpers/refunds/{refund_id}/fund", FUNDING[how])

    def retry(self):
        """The last call again, as a client whose connection broke: a success is replayed as it was;
        a refusal stored nothing under its key, so the retry is a request of its own."""
        if self.last is None:
            return
        path, body, key, status, answer = self.last
        again = self.call(path, body, key=key)
        if key and status < 300:
            assert (again.status_code, again.json) == (status, answer)
            assert again.headers["Idempotent-Replayed"] == "true"


def deadline_passes(refund_id):
    """The funding deadline passes, for Tender and the sandbox alike; funding already sent stays in time."""
    past = utcnow() - dt.timedelta(minutes=1)
    with db.connection_context():
        refund = Refund.get(Refund.public_id == refund_id)
        deposit = SandboxDeposit.get_by_id(refund.deposit_address)
        in_time = deposit.deposited_at is not None and deposit.deposited_at <= deposit.deadline
        SandboxDeposit.update(deadline=past, **({"deposited_at": past - dt.timedelta(seconds=1)} if in_time else {})
                              ).where(SandboxDeposit.deposit_address == refund.deposit_address).execute()
        Refund.update(expires_at=past).where(Refund.id == refund.id).execute()


def never_more_out_than_in(invoice_id):
    with db.connection_context():
        invoice = Invoice.get(Invoice.public_id == invoice_id)
        delivered = (Refund.select(Refund.amount).join(Transaction, on=(Transaction.refund == Refund.id))
                     .where((Refund.invoice == invoice.id) & (Transaction.type == "refund")))
        assert sum((row.amount for row in delivered), Decimal(0)) <= invoice.received_amount


def poll_round():
    poll_until_quiet("refunds", rounds=1)


def play(merchant, step):
    kind, *args = step
    refund_id = merchant.pick(args[0]) if args and kind != "create" else None
    if kind == "create":
        merchant.create(args[0])
    elif kind == "poll":
        poll_round()
    elif kind == "retry":
        merchant.retry()
    elif refund_id is None:
        return
    elif kind == "cancel":
        merchant.cancel(refund_id)
    elif kind == "fund":
        merchant.fund(refund_id, args[1])
    elif kind == "late_fund":
        deadline_passes(refund_id)
        merchant.fund(refund_id)
    elif kind == "deadline":
        deadline_passes(refund_id)
        close_funding_windows()
    elif kind == "race":     # a cancel, the poller and a second refund of the whole amount, at once
        calls = iter([lambda: merchant.cancel(refund_id), poll_round, lambda: merchant.create("10.00")])
        assert run_at_once(lambda: next(calls)(), 3) == []


def settle_everything(merchant):
    """Let every refund run to its end: poll, close every funding window, poll again. A funding's
    whole story is at most three sandbox reads; closed refunds stay watched (late funding), so the
    poller is never quiet and the rounds are counted."""
    poll_until_quiet("refunds", rounds=SANDBOX_STEPS)
    for refund_id in merchant.refunds:
        deadline_passes(refund_id)
    close_funding_windows()
    poll_until_quiet("refunds", rounds=SANDBOX_STEPS)


# The double payout as it was reported: funding that crossed a cancel, and a second refund of the money.
CROSSED_CANCEL = [("create", "10.00"), ("cancel", 0), ("create", "10.00"), ("fund", 0, "success"),
                  ("fund", 1, "success")]
# Funding sent in time and seen only once the deadline passed: the window closes only when the provider says so.
SEEN_LATE = [("create", "10.00"), ("cancel", 0), ("fund", 0, "success"), ("deadline", 0), ("create", "10.00"),
             ("fund", 1, "success")]


@hyp_settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=steps)
@example(sequence=CROSSED_CANCEL)
@example(sequence=SEEN_LATE)
def test_refunds_never_deliver_more_than_received_and_every_book_agrees(app, client, auth, unlimited_writes,
                                                                           sequence):
    merchant = Merchant(app, auth, paid_invoice(client, auth, amount="10.00")["id"])
    for step in sequence:
        play(merchant, step)
        never_more_out_than_in(merchant.invoice_id)
    settle_everything(merchant)
    never_more_out_than_in(merchant.invoice_id)
    assert_refund_books_agree(client, auth, merchant.invoice_id)
