"""A provider that reads a claimed batch's statuses in one call (providers/base.ReadsManyStatuses):
each row's answer, or the error of its own read, is handled as if the row had been asked alone."""
import datetime as dt
from decimal import Decimal

import pytest

import jobs
from core.clock import utcnow
from models.base import db
from providers import base
from providers.base import DepositStatus, ProviderRejected, ProviderUnavailable
from services.engine import polling
from tests import factories
from tests.payflow import event_types, next_poll_of, reload

PROCESSING = DepositStatus(status=base.PROCESSING, correlation_id="corr", amount_in=Decimal("10.05"),
                           amount_in_usd=Decimal("10.05"), origin_tx_hashes=("0xorigin",))


@pytest.fixture
def runtime(app, settings):
    jobs.use_runtime(settings)
    yield settings


class _ReadsMany:
    """Answers by address; counts its calls. It has no `deposit_status`: the poller must not ask one by one."""

    def __init__(self, answers=None, failure=None):
        self.answers, self.failure, self.calls = answers or {}, failure, []

    def deposit_statuses(self, deposits):
        self.calls.append([deposit.address for deposit in deposits])
        if self.failure is not None:
            raise self.failure
        return [self.answers[deposit.address] for deposit in deposits]


def _awaiting(store, now, address):
    return factories.make_invoice(store, now=now - dt.timedelta(minutes=1), status="awaiting_payment",
                                  deposit_address=address, origin_asset="usdc.eth", refund_to="buyer",
                                  amount_due=Decimal("10.05"), quoted_at=now, provider_status=base.PENDING_DEPOSIT,
                                  next_poll_at=now - dt.timedelta(seconds=1))


def _poll(provider, now) -> int:
    with db.connection_context():
        return polling.poll_due("chain", provider, clock=lambda: now, base_seconds=10, hot_seconds=2,
                                batch_size=10, concurrency=2)


def test_each_answer_of_a_batch_read_is_handled_as_its_own(runtime, store):
    now = utcnow()
    quiet, paying, unknown, down = (_awaiting(store, now, address) for address in ("quiet", "paying", "unknown", "down"))
    provider = _ReadsMany({"quiet": DepositStatus(status=base.PENDING_DEPOSIT), "paying": PROCESSING,
                           "unknown": ProviderRejected("no such address"), "down": ProviderUnavailable("timeout")})
    assert _poll(provider, now) == 4
    assert len(provider.calls) == 1 and sorted(provider.calls[0]) == ["down", "paying", "quiet", "unknown"]
    assert (reload(paying).status, event_types(paying)[-1]) == ("paid", "invoice.paid")
    assert reload(quiet).status == reload(unknown).status == reload(down).status == "awaiting_payment"
    assert next_poll_of(quiet) == now + dt.timedelta(seconds=2)                   # hot: just quoted
    assert next_poll_of(unknown) == now + dt.timedelta(seconds=polling.MAX_INTERVAL_SECONDS)
    assert next_poll_of(down) == now + dt.timedelta(seconds=10)


def test_a_batch_read_that_fails_as_a_whole_asks_again_at_the_base_interval(runtime, store):
    now = utcnow()
    invoices = [_awaiting(store, now, f"addr-{index}") for index in range(3)]
    assert _poll(_ReadsMany(failure=ProviderUnavailable("connection refused")), now) == 3
    assert {next_poll_of(invoice) for invoice in invoices} == {now + dt.timedelta(seconds=10)}
    assert {reload(invoice).status for invoice in invoices} == {"awaiting_payment"}
