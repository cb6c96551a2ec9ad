"""Query budgets of one poll (docs/payment-engine.md#one-answer-one-write): what a poll may read and
write of the invoice row, counted statement by statement over the whole poll, claim included.

The invoice is the merchant-facing row (many indexes, the books' roll-up): a poll reads it once
(with its claim), and writes it only when the provider's answer changes it, then once."""
import datetime as dt
from decimal import Decimal

import pytest

import jobs
from core.clock import utcnow
from models.base import db
from providers import base
from providers.base import DepositStatus, QuoteRequest
from providers.sandbox import SandboxProvider
from services.engine import polling
from tests import factories
from tests.payflow import event_types, make_due, reload
from tests.support.queries import counting_queries, tables_of


@pytest.fixture
def runtime(app, settings):
    jobs.use_runtime(settings)
    yield settings


class _Answers:
    def __init__(self, status: DepositStatus):
        self.status = status

    def deposit_status(self, address, memo=None, **_):
        return self.status


PROCESSING = DepositStatus(status=base.PROCESSING, correlation_id="corr", amount_in=Decimal("10.05"),
                           amount_in_usd=Decimal("10.05"), origin_tx_hashes=("0xorigin",))
SUCCESS = DepositStatus(status=base.SUCCESS, correlation_id="corr", amount_in=Decimal("10.05"),
                        amount_in_usd=Decimal("10.05"), amount_out=Decimal("10"), origin_tx_hashes=("0xorigin",),
                        destination_tx_hashes=("0xpayout",))


def _awaiting(store, now, **over):
    fields = dict(status="awaiting_payment", deposit_address="addr", origin_asset="usdc.eth", refund_to="buyer",
                  amount_due=Decimal("10.05"), quoted_at=now, provider_status=base.PENDING_DEPOSIT,
                  next_poll_at=now - dt.timedelta(seconds=1))
    return factories.make_invoice(store, now=now - dt.timedelta(minutes=1), **{**fields, **over})


def _converting(store, now):
    return _awaiting(store, now, status="paid", swap_status="processing", paid_amount=Decimal("10.05"),
                     paid_at=now, deposit_seen_at=now, provider_status=base.PROCESSING)


def _poll(phase, answer, now):
    with db.connection_context():
        with counting_queries() as queries:
            polled = polling.poll_due(phase, _Answers(answer), clock=lambda: now, base_seconds=10, hot_seconds=2,
                                      batch_size=10, concurrency=1)
    assert polled == 1
    return queries


def _invoice_budget(queries, *, reads: int, writes: int):
    counted = queries.by_table()
    invoice = {kind: counted[("invoice", kind)] for kind in ("select", "insert", "update", "delete")}
    assert invoice["select"] <= reads and invoice["update"] <= writes, (invoice, queries.statements)
    assert invoice["insert"] == invoice["delete"] == 0, invoice


def test_a_confirming_poll_reads_and_writes_the_invoice_once_each(runtime, store):
    now = utcnow()
    invoice = _awaiting(store, now)
    queries = _poll("chain", PROCESSING, now)
    assert (reload(invoice).status, event_types(invoice)[-1]) == ("paid", "invoice.paid")
    _invoice_budget(queries, reads=1, writes=1)


def test_a_settling_poll_reads_and_writes_the_invoice_once_each(runtime, store):
    now = utcnow()
    invoice = _converting(store, now)
    queries = _poll("settlement", SUCCESS, now)
    assert (reload(invoice).swap_status, reload(invoice).received_amount) == (None, Decimal("10.00"))
    _invoice_budget(queries, reads=1, writes=1)


def test_an_answer_that_pays_and_settles_at_once_is_still_one_write(runtime, store):
    now = utcnow()
    invoice = _awaiting(store, now)
    queries = _poll("chain", SUCCESS, now)
    assert {"invoice.paid", "invoice.settled"} <= set(event_types(invoice))
    _invoice_budget(queries, reads=1, writes=1)


@pytest.mark.parametrize("phase, make, answer", [
    ("chain", _awaiting, DepositStatus(status=base.PENDING_DEPOSIT)),
    ("settlement", _converting, PROCESSING),
], ids=["awaiting a deposit", "converting"])
def test_a_poll_that_learns_nothing_writes_nothing_on_the_invoice(runtime, store, phase, make, answer):
    now = utcnow()
    invoice = make(store, now)
    if phase == "settlement":
        _poll(phase, answer, now)       # the first PROCESSING of the settlement poller records the deposit
        make_due(invoice, now)
    before = reload(invoice)
    queries = _poll(phase, answer, now)
    _invoice_budget(queries, reads=1, writes=0)
    assert reload(invoice).updated_at == before.updated_at


def _awaiting_at_the_sandbox(store, now, count: int) -> None:
    provider = SandboxProvider()
    with db.connection_context():
        quotes = [provider.quote(QuoteRequest(origin_asset="usdc.eth", destination_asset="usdc.near",
                                              amount_out=Decimal("10"), recipient="merchant.near", refund_to="buyer",
                                              deadline=now + dt.timedelta(hours=1), dry=False))
                  for _ in range(count)]
    for quote in quotes:
        _awaiting(store, now, deposit_address=quote.deposit_address)


def test_a_batch_that_learns_nothing_costs_the_same_statements_whatever_its_size(runtime, store):
    """The sandbox answers a claimed batch with one SELECT, and the batch's next poll times are one
    UPDATE: a poll of six quiet invoices sends what a poll of one does."""
    now = utcnow()
    counted = {}
    for size in (1, 6):
        _awaiting_at_the_sandbox(store, now, size)      # the earlier ones are scheduled past `now` by then
        with db.connection_context():
            with counting_queries() as queries:
                assert polling.poll_due("chain", SandboxProvider(), clock=lambda: now, base_seconds=10,
                                        hot_seconds=2, batch_size=10, concurrency=4) == size
        counted[size] = queries.by_table()
    assert counted[6] == counted[1], (counted, queries.statements)
    assert counted[6][("sandbox_deposit", "select")] == 1


def test_a_confirming_poll_reads_its_origin_transaction_once(runtime, store):
    """The buyer's deposit (`payment_origin`): recorded, its hash given to the move, one read in all."""
    now = utcnow()
    invoice = _awaiting(store, now)
    queries = _poll("chain", PROCESSING, now)
    assert reload(invoice).status == "paid"
    assert queries.by_table()[("transaction", "select")] <= 1, queries.statements


REFUND_DELIVERED = DepositStatus(status=base.SUCCESS, correlation_id="corr-refund", amount_in=Decimal("5.00"),
                                 amount_in_usd=Decimal("5.00"), amount_out=Decimal("4.975"),
                                 origin_tx_hashes=("0xfunding",), destination_tx_hashes=("0xdelivered",))


def test_a_refunds_success_poll_reads_and_writes_the_refund_once_each(runtime, store):
    """A refund's success (delivered, recorded, counted on the invoice, its event written) costs its
    refund row the claim's read and one compare-and-set."""
    from models.refunds import Refund
    from services.engine import poll_state

    now = utcnow()
    invoice = factories.make_invoice(store, now=now - dt.timedelta(hours=1), status="paid", paid_amount=Decimal("10"),
                                     received_amount=Decimal("10.00"), paid_at=now, origin_asset="usdc.eth")
    refund = factories.make_refund(invoice, now=now, status="processing", deposit_seen_at=now,
                                   provider_status=base.PROCESSING, funded_amount=Decimal("5.00"),
                                   funding_tx_hash="0xfunding")
    with db.connection_context():
        poll_state.watch(refund, at=now - dt.timedelta(seconds=1))
    queries = _poll("refunds", REFUND_DELIVERED, now)
    with db.connection_context():
        done = Refund.get_by_id(refund.id)
    assert (done.status, done.transaction_hash, done.delivered_amount) == ("succeeded", "0xdelivered", Decimal("4.975"))
    assert reload(invoice).refunded_amount == Decimal("5.00")
    assert "refund.succeeded" in event_types(invoice)
    counted = queries.by_table()
    row = {kind: counted[("refund", kind)] for kind in ("select", "update", "insert", "delete")}
    assert row["select"] <= 1 and row["update"] <= 1, (row, queries.statements)
    assert row["insert"] == row["delete"] == 0, row


def test_statements_are_counted_per_table_and_kind():
    assert tables_of('UPDATE "poll_state" SET "x" = 1 WHERE "invoice_id" IN (SELECT "t1"."invoice_id" '
                     'FROM "poll_state" AS "t1")') == ("update", {"poll_state"})
    assert tables_of('SELECT * FROM "invoice" AS "t1" INNER JOIN "poll_state" AS "t2"') == (
        "select", {"invoice", "poll_state"})
    assert tables_of('SAVEPOINT "s1";') == ("", set())
