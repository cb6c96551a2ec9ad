import datetime as dt
from decimal import Decimal
import re

import pytest

from core.clock import utcnow
from models.base import db
from providers import base, get_provider
from providers.base import DepositQuery, ProviderRejected, QuoteRequest
from providers.sandbox import SandboxProvider, SlowSandboxProvider
from tests.support.queries import counting_queries

ADDRESS_PATTERNS = {
    "btc": r"^bc1q[02-9ac-hj-np-z]{38}$", "eth": r"^0x[0-9a-f]{40}$", "usdc.base": r"^0x[0-9a-f]{40}$",
    "sol": r"^[1-9A-HJ-NP-Za-km-z]{44}$", "near": r"^[0-9a-f]{64}$", "usdt.tron": r"^T[1-9A-HJ-NP-Za-km-z]{33}$",
    "xlm": r"^G[A-Z2-7]{55}$",
}


def _request(origin, *, dry, deadline=None, amount="10"):
    return QuoteRequest(origin_asset=origin, destination_asset="usdc.near", amount_out=Decimal(amount),
                        recipient="merchant.near", refund_to="buyer", deadline=deadline or utcnow() + dt.timedelta(hours=1),
                        dry=dry)


def test_prices_are_deterministic_and_include_the_fee(app):
    provider = SandboxProvider()
    with db.connection_context():
        first, again = provider.quote(_request("btc", dry=True)), provider.quote(_request("btc", dry=True))
    assert first.amount_in == again.amount_in == Decimal("0.00015462")   # 10.05 USD at 65,000, rounded up
    assert first.deposit_address is None


@pytest.mark.parametrize("origin, pattern", ADDRESS_PATTERNS.items())
def test_deposit_addresses_look_like_their_network(app, origin, pattern):
    with db.connection_context():
        quote = SandboxProvider().quote(_request(origin, dry=False))
    assert re.match(pattern, quote.deposit_address)
    assert (quote.deposit_memo is not None) == (origin == "xlm")


@pytest.mark.parametrize("outcome, sequence", [
    ("success", [base.KNOWN_DEPOSIT_TX, base.PROCESSING, base.SUCCESS, base.SUCCESS]),
    ("underpaid", [base.KNOWN_DEPOSIT_TX, base.INCOMPLETE_DEPOSIT, base.INCOMPLETE_DEPOSIT]),
    ("refunded", [base.KNOWN_DEPOSIT_TX, base.PROCESSING, base.REFUNDED]),
    ("failed", [base.KNOWN_DEPOSIT_TX, base.PROCESSING, base.FAILED]),
])
def test_status_follows_the_1click_sequence_over_polls(app, outcome, sequence):
    provider = SandboxProvider()
    with db.connection_context():
        quote = provider.quote(_request("usdc.eth", dry=False))
        assert provider.deposit_status(quote.deposit_address).status == base.PENDING_DEPOSIT
        assert provider.record_deposit(quote.deposit_address, outcome=outcome, amount=None, now=utcnow())
        assert not provider.record_deposit(quote.deposit_address, outcome="failed", amount=None, now=utcnow())
        seen = [provider.deposit_status(quote.deposit_address) for _ in sequence]
    assert [s.status for s in seen] == sequence
    final = seen[-1]
    assert final.origin_tx_hashes and final.amount_in == (quote.amount_in / 2 if outcome == "underpaid" else quote.amount_in)
    assert bool(final.destination_tx_hashes) == (outcome == "success")
    assert bool(final.refund_tx_hashes) == (outcome == "refunded")


def test_a_deposit_after_the_deadline_is_refunded(app):
    provider = SandboxProvider()
    with db.connection_context():
        quote = provider.quote(_request("eth", dry=False, deadline=utcnow() - dt.timedelta(seconds=1)))
        provider.record_deposit(quote.deposit_address, outcome=None, amount=None, now=utcnow())
        statuses = [provider.deposit_status(quote.deposit_address).status for _ in range(3)]
    assert statuses == [base.KNOWN_DEPOSIT_TX, base.REFUNDED, base.REFUNDED]


def test_unknown_address_and_asset_are_rejected(app):
    provider = SandboxProvider()
    with db.connection_context():
        with pytest.raises(ProviderRejected):
            provider.deposit_status("0xnothing")
        with pytest.raises(ProviderRejected):
            provider.quote(_request("doge", dry=True))


def test_a_batch_read_answers_each_deposit_as_a_read_of_its_own_would(app):
    provider = SandboxProvider()
    with db.connection_context():
        waiting, paid, stellar = (provider.quote(_request(origin, dry=False)) for origin in ("usdc.eth", "eth", "xlm"))
        provider.record_deposit(paid.deposit_address, outcome="success", amount=None, now=utcnow())
        asked = [DepositQuery(waiting.deposit_address), DepositQuery(paid.deposit_address),
                 DepositQuery("0xnothing"), DepositQuery(stellar.deposit_address, "1"),
                 DepositQuery(stellar.deposit_address, stellar.deposit_memo), DepositQuery(paid.deposit_address)]
        answers = provider.deposit_statuses(asked)
        assert [getattr(answer, "status", None) for answer in answers] == [
            base.PENDING_DEPOSIT, base.KNOWN_DEPOSIT_TX, None, None, base.PENDING_DEPOSIT, base.PROCESSING]
        assert isinstance(answers[2], ProviderRejected) and isinstance(answers[3], ProviderRejected)
        assert answers[0] == provider.deposit_status(waiting.deposit_address)      # the same answer alone
        assert provider.deposit_status(paid.deposit_address).status == base.SUCCESS   # each read one step on
        assert provider.deposit_statuses([]) == []


def test_a_batch_of_deposits_without_money_is_one_select(app):
    provider = SandboxProvider()
    with db.connection_context():
        quotes = [provider.quote(_request("usdc.eth", dry=False)) for _ in range(5)]
        with counting_queries() as queries:
            answers = provider.deposit_statuses([DepositQuery(quote.deposit_address) for quote in quotes])
    assert [answer.correlation_id for answer in answers] == [quote.correlation_id for quote in quotes]
    assert len(queries.statements) == queries.count("sandbox_deposit", "select") == 1, queries.statements


def test_get_provider_picks_by_setting(settings):
    import dataclasses

    assert get_provider(settings).name == "sandbox"
    assert get_provider(dataclasses.replace(settings, swap_provider="oneclick")).name == "oneclick"


def test_a_slow_sandbox_is_asked_one_deposit_a_request_as_a_remote_provider_is(app, settings):
    import dataclasses

    slow = get_provider(dataclasses.replace(settings, sandbox_latency_ms=1))
    assert isinstance(slow, SlowSandboxProvider) and slow.latency_seconds == 0.001
    assert getattr(slow, "deposit_statuses") is None             # the pollers ask it deposit by deposit
    with db.connection_context():
        quote = slow.quote(_request("usdc.eth", dry=False))
        assert slow.deposit_status(quote.deposit_address).status == base.PENDING_DEPOSIT
