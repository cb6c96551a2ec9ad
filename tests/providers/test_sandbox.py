import datetime as dt
from decimal import Decimal
import re

import pytest

from core.clock import utcnow
from models.base import db
from providers import base, get_provider
from providers.base import ProviderRejected, QuoteRequest
from providers.sandbox import SandboxProvider

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


def test_get_provider_picks_by_setting(settings):
    import dataclasses

    assert get_provider(settings).name == "sandbox"
    assert get_provider(dataclasses.replace(settings, swap_provider="oneclick")).name == "oneclick"
