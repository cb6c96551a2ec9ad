"""The watched deposit: a one-time address the provider swaps from, which Tender follows by asking
the provider about it. An invoice has one (the buyer's payment), and so has a merchant refund (the
merchant's funding): both are asked about, polled and answered with these functions, each row with
its own meaning of the answer (services/engine/payments.py, services/engine/refund_answers.py).

The row's polling columns carry the same names on both (`deposit_address`, `deposit_memo`,
`origin_decimals`, `destination_decimals`), so one function serves both.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as AnswerTimeout
import logging
import os

from core.errors import Unavailable
from models.base import db
from providers import base
from providers.base import DepositQuery, DepositStatus, ProviderError, ProviderUnavailable

log = logging.getLogger("tender.provider")

# The provider has seen money at the address: from then on it is in flight, whatever happens next.
DEPOSIT_SEEN = (base.KNOWN_DEPOSIT_TX, base.PROCESSING, base.SUCCESS, base.INCOMPLETE_DEPOSIT,
                base.REFUNDED, base.FAILED)


def deposit_query(row) -> DepositQuery:
    """What the provider is asked about an invoice's or a refund's deposit address, with the
    decimals recorded at quote time (only when recorded: the sandbox quotes without them)."""
    recorded = (row.origin_decimals, row.destination_decimals)
    return DepositQuery(row.deposit_address, row.deposit_memo, None if None in recorded else recorded)


def deposit_status(provider, row) -> DepositStatus:
    """Ask the provider about the row's deposit address, now."""
    query = deposit_query(row)
    if query.decimals is None:
        return provider.deposit_status(query.address, query.memo)
    return provider.deposit_status(query.address, query.memo, decimals=query.decimals)


_askers: dict = {}


def ask_deposit_status(provider, row, *, timeout_seconds: float) -> DepositStatus:
    """The provider's status of the row's deposit, waited for at most `timeout_seconds` (then
    ProviderUnavailable): a stalled provider cannot hold a request or a sweep (a cancel, an expiry),
    whatever the adapter's own timeouts. The call runs on a small per-process pool and may finish
    unseen."""
    pool = _askers.get(os.getpid())
    if pool is None:                      # one pool per process, made after any fork
        pool = _askers[os.getpid()] = ThreadPoolExecutor(max_workers=4, thread_name_prefix="provider-ask")

    def ask():
        with db.connection_context():     # the sandbox reads its chain from the database
            return deposit_status(provider, row)

    try:
        return pool.submit(ask).result(timeout=timeout_seconds)
    except AnswerTimeout:
        raise ProviderUnavailable(f"no answer within {timeout_seconds} s") from None


def cannot_rule_out(row, error: ProviderError, *, money: str) -> Unavailable:
    """The 503 of a cancel whose provider could not say that no `money` reached the address. The
    provider's error (hosts, ports, exception text) is logged for the operator, never answered."""
    log.warning("cancel of %s refused: the provider did not answer: %s", row.public_id, error)
    return Unavailable("provider_unavailable", f"The swap provider could not confirm that no {money} was sent; "
                       "retry the cancel shortly.")
