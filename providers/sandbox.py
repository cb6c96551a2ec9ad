"""The `sandbox` provider: a 1Click simulator whose chain lives in the database.

Every process (web, each worker, the scheduler) sees the same simulated chain because the state
is a `SandboxDeposit` row, not memory. Prices are fixed, so quotes are deterministic; deposit
addresses look like their network's; stellar deposits carry a memo. A deposit is recorded by the
test helper (`record_deposit`); each later status read advances it one step along the 1Click
sequence of its outcome, as successive polls of a real swap would see it.
"""
from __future__ import annotations

import datetime as dt
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
import secrets
import time
from typing import Sequence

from models.sandbox import SandboxDeposit
from providers import base
from providers.base import (
    Asset, DepositQuery, DepositStatus, ProviderError, ProviderRejected, Quote, QuoteRequest, ReverseQuoteRequest,
)

FEE_RATE = Decimal("0.005")        # the simulated swap fee the buyer pays on top (0.5%)
OUTCOMES = ("success", "underpaid", "overpaid", "refunded", "failed")
READ_CHUNK = 500                   # addresses a status SELECT names at most (SQLite's bound parameters)
OVERPAYMENT = Decimal("1.2")       # an `overpaid` deposit without an amount sends this much of what is due
SEQUENCES = {
    "success": (base.KNOWN_DEPOSIT_TX, base.PROCESSING, base.SUCCESS),
    "overpaid": (base.KNOWN_DEPOSIT_TX, base.PROCESSING, base.SUCCESS),   # the excess is refunded
    "underpaid": (base.KNOWN_DEPOSIT_TX, base.INCOMPLETE_DEPOSIT),
    "refunded": (base.KNOWN_DEPOSIT_TX, base.PROCESSING, base.REFUNDED),
    "failed": (base.KNOWN_DEPOSIT_TX, base.PROCESSING, base.FAILED),
    "late": (base.KNOWN_DEPOSIT_TX, base.REFUNDED),     # after the deadline the provider refunds
    # A refund's funding that stays short: the provider sends it back at its deadline.
    "short": (base.KNOWN_DEPOSIT_TX, base.INCOMPLETE_DEPOSIT, base.REFUNDED),
}

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def _pick(alphabet: str, length: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


# network: (address maker, transaction hash maker)
NETWORKS = {
    "btc": (lambda: "bc1q" + _pick(_BECH32, 38), lambda: secrets.token_hex(32)),
    "eth": (lambda: "0x" + secrets.token_hex(20), lambda: "0x" + secrets.token_hex(32)),
    "base": (lambda: "0x" + secrets.token_hex(20), lambda: "0x" + secrets.token_hex(32)),
    "sol": (lambda: _pick(_B58, 44), lambda: _pick(_B58, 88)),
    "near": (lambda: secrets.token_hex(32), lambda: _pick(_B58, 44)),
    "tron": (lambda: "T" + _pick(_B58, 33), lambda: secrets.token_hex(32)),
    "stellar": (lambda: "G" + _pick(_B32, 55), lambda: secrets.token_hex(32)),
}

ASSETS = tuple(Asset(code=code, symbol=symbol, network=network, decimals=decimals,
                     provider_asset_id=f"sandbox:{code}", price_usd=Decimal(price), needs_memo=network == "stellar")
               for code, symbol, network, decimals, price in (
                   ("btc", "BTC", "btc", 8, "65000"),
                   ("eth", "ETH", "eth", 18, "3200"),
                   ("sol", "SOL", "sol", 9, "150"),
                   ("near", "NEAR", "near", 24, "5"),
                   ("xlm", "XLM", "stellar", 7, "0.1"),
                   ("usdc.eth", "USDC", "eth", 6, "1"),
                   ("usdc.base", "USDC", "base", 6, "1"),
                   ("usdt.tron", "USDT", "tron", 6, "1"),
                   ("usdc.near", "USDC", "near", 6, "1"),
               ))
_BY_CODE = {asset.code: asset for asset in ASSETS}


def asset(code: str) -> Asset:
    found = _BY_CODE.get(code)
    if found is None:
        raise ProviderRejected(f"the sandbox does not offer asset {code!r}")
    return found


def sandbox_refund_address(code: str) -> str:
    """A plausible buyer address on the asset's network (the test helper's default refund_to)."""
    return NETWORKS[asset(code).network][0]()


def _places(decimals: int) -> Decimal:
    # Shown amounts keep at most 8 decimals: what a wallet would display and a buyer would type.
    return Decimal(1).scaleb(-min(decimals, 8))


class SandboxProvider:
    name = "sandbox"

    def supported_assets(self) -> list[Asset]:
        return list(ASSETS)

    def quote(self, request: QuoteRequest) -> Quote:
        origin, destination = asset(request.origin_asset), asset(request.destination_asset)
        if request.amount_out <= 0:
            raise ProviderRejected("amount_out must be positive")
        # As 1Click does with `appFees`: the operator's fee is a share of the swap, so the buyer sends
        # enough for the exact output and the fee on top (then the swap fee).
        swap_usd = request.amount_out * destination.price_usd / (1 - Decimal(request.app_fee_bps) / 10000)
        amount_in = (swap_usd * (1 + FEE_RATE) / origin.price_usd).quantize(
            _places(origin.decimals), rounding=ROUND_CEILING)
        quote = Quote(origin_asset=origin.code, destination_asset=destination.code, amount_in=amount_in,
                      amount_out=request.amount_out, amount_in_usd=amount_in * origin.price_usd,
                      deadline=request.deadline, deposit_address=None, time_estimate_seconds=20)
        if request.dry:
            return quote
        address = NETWORKS[origin.network][0]()
        memo = str(secrets.randbelow(9 * 10 ** 9) + 10 ** 9) if origin.needs_memo else None
        correlation_id = secrets.token_hex(16)
        SandboxDeposit.create(
            deposit_address=address, deposit_memo=memo, correlation_id=correlation_id,
            origin_asset=origin.code, destination_asset=destination.code, amount_in=amount_in,
            amount_out=request.amount_out, recipient=request.recipient, refund_to=request.refund_to,
            deadline=request.deadline, created_at=_now())
        return Quote(**{**quote.__dict__, "deposit_address": address, "deposit_memo": memo,
                        "correlation_id": correlation_id})

    def reverse_quote(self, request: ReverseQuoteRequest) -> Quote:
        """A merchant refund: the merchant sends exactly `amount_in`; the buyer gets its value less the fee."""
        origin, destination = asset(request.origin_asset), asset(request.destination_asset)
        if request.amount_in <= 0:
            raise ProviderRejected("amount_in must be positive")
        amount_out = (request.amount_in * origin.price_usd * (1 - FEE_RATE) / destination.price_usd).quantize(
            _places(destination.decimals), rounding=ROUND_FLOOR)
        address = NETWORKS[origin.network][0]()
        memo = str(secrets.randbelow(9 * 10 ** 9) + 10 ** 9) if origin.needs_memo else None
        correlation_id = secrets.token_hex(16)
        SandboxDeposit.create(
            deposit_address=address, deposit_memo=memo, correlation_id=correlation_id,
            origin_asset=origin.code, destination_asset=destination.code, amount_in=request.amount_in,
            amount_out=amount_out, recipient=request.recipient, refund_to=request.refund_to,
            deadline=request.deadline, created_at=_now())
        return Quote(origin_asset=origin.code, destination_asset=destination.code, amount_in=request.amount_in,
                     amount_out=amount_out, amount_in_usd=request.amount_in * origin.price_usd,
                     deadline=request.deadline, deposit_address=address, deposit_memo=memo,
                     correlation_id=correlation_id, time_estimate_seconds=20)

    def deposit_status(self, deposit_address: str, deposit_memo: str | None = None, *,
                       decimals: tuple[int, int] | None = None) -> DepositStatus:
        answer, = _answers([DepositQuery(deposit_address, deposit_memo, decimals)])
        if isinstance(answer, ProviderError):
            raise answer
        return answer

    def deposit_statuses(self, deposits: Sequence[DepositQuery]) -> list[DepositStatus | ProviderError]:
        """A poller's batch in one SELECT (base.ReadsManyStatuses)."""
        return _answers(deposits)

    # --- the simulated chain (test helpers) ----------------------------------------------

    def record_deposit(self, deposit_address: str, *, outcome: str | None, amount: Decimal | None,
                       now: dt.datetime) -> bool:
        """Simulate the buyer's transfer. Once per address (False when one was already recorded),
        except a `success` after an `underpaid` deposit: the buyer tops it up to what is due."""
        row = SandboxDeposit.get_by_id(deposit_address)
        origin = asset(row.origin_asset)
        if row.outcome == "underpaid" and outcome in (None, "success"):
            return self._top_up(row, now=now)
        if outcome is None:
            outcome = ("underpaid" if amount is not None and amount < row.amount_in
                       else "overpaid" if amount is not None and amount > row.amount_in else "success")
        if amount is None:
            short = (row.amount_in / 2).quantize(_places(origin.decimals), rounding=ROUND_FLOOR)
            amount = {"underpaid": short, "short": short,
                      "overpaid": (row.amount_in * OVERPAYMENT).quantize(_places(origin.decimals))}.get(
                outcome, row.amount_in)
        destination_network = asset(row.destination_asset).network
        return SandboxDeposit.update(
            outcome=outcome, deposited_amount=amount, deposited_at=now, polls=0,
            origin_tx_hash=NETWORKS[origin.network][1](),
            destination_tx_hash=NETWORKS[destination_network][1](),
            refund_tx_hash=NETWORKS[origin.network][1](),
        ).where((SandboxDeposit.deposit_address == deposit_address)
                & SandboxDeposit.deposited_at.is_null()).execute() == 1

    @staticmethod
    def _top_up(row: SandboxDeposit, *, now: dt.datetime) -> bool:
        # The deposit now covers what is due; the provider goes on from the deposit it knows.
        return SandboxDeposit.update(outcome="success", deposited_amount=row.amount_in, polls=1).where(
            (SandboxDeposit.deposit_address == row.deposit_address)
            & (SandboxDeposit.outcome == "underpaid")).execute() == 1


class SlowSandboxProvider(SandboxProvider):
    """The sandbox answering each status read after `latency_seconds`, as a real provider answers
    in tens or hundreds of milliseconds: tests and benchmarks use it to see the pollers'
    concurrency and a worker killed mid-poll. It plays a remote provider, which is asked one
    deposit a request (1Click), so it has no batch read: the pollers' threads wait on it as they
    would on 1Click."""
    deposit_statuses = None

    def __init__(self, *, latency_seconds: float):
        self.latency_seconds = latency_seconds

    def deposit_status(self, deposit_address: str, deposit_memo: str | None = None, *,
                       decimals: tuple[int, int] | None = None) -> DepositStatus:
        time.sleep(self.latency_seconds)
        return super().deposit_status(deposit_address, deposit_memo, decimals=decimals)


def _answers(deposits: Sequence[DepositQuery]) -> list[DepositStatus | ProviderError]:
    """Most deposits have seen no money, and their answer needs nothing more than one SELECT of
    the batch reads; a deposited one is advanced and read on its own."""
    known = _known_deposits({deposit.address for deposit in deposits})
    return [_answer(known.get(deposit.address), deposit) for deposit in deposits]


def _known_deposits(addresses) -> dict:
    """Each known address's deposit, as much of it as a status read needs first (all of it only
    once deposited), READ_CHUNK addresses a SELECT."""
    columns = (SandboxDeposit.deposit_address, SandboxDeposit.deposit_memo, SandboxDeposit.correlation_id,
               SandboxDeposit.deposited_at)
    addresses, known = list(addresses), {}
    for start in range(0, len(addresses), READ_CHUNK):
        chunk = addresses[start:start + READ_CHUNK]
        for row in SandboxDeposit.select(*columns).where(SandboxDeposit.deposit_address.in_(chunk)).namedtuples():
            known[row.deposit_address] = row
    return known


def _answer(known, deposit: DepositQuery) -> DepositStatus | ProviderError:
    if known is None or (known.deposit_memo or None) != (deposit.memo or None):
        return ProviderRejected(f"no sandbox deposit address {deposit.address!r}")
    if known.deposited_at is None:
        return DepositStatus(status=base.PENDING_DEPOSIT, correlation_id=known.correlation_id)
    # Each read advances one step: an atomic increment, so concurrent readers never skip back.
    SandboxDeposit.update(polls=SandboxDeposit.polls + 1).where(
        SandboxDeposit.deposit_address == deposit.address).execute()
    return _status_of(SandboxDeposit.get_by_id(deposit.address))


def _status_of(row: SandboxDeposit) -> DepositStatus:
    late = row.deposited_at > row.deadline
    sequence = SEQUENCES["late" if late else row.outcome]
    status = sequence[min(max(row.polls, 1), len(sequence)) - 1]
    origin, destination = asset(row.origin_asset), asset(row.destination_asset)
    delivered = status == base.SUCCESS
    refunded = status == base.REFUNDED
    excess = row.deposited_amount - row.amount_in if delivered and row.outcome == "overpaid" else Decimal(0)
    return DepositStatus(
        status=status,
        correlation_id=row.correlation_id,
        amount_in=row.deposited_amount,
        amount_in_usd=row.deposited_amount * origin.price_usd,
        amount_out=row.amount_out if delivered else None,
        amount_out_usd=row.amount_out * destination.price_usd if delivered else None,
        refunded_amount=row.deposited_amount if refunded else excess if excess > 0 else None,
        origin_tx_hashes=(row.origin_tx_hash,),
        destination_tx_hashes=(row.destination_tx_hash,) if delivered else (),
        refund_tx_hashes=(row.refund_tx_hash,) if refunded or excess > 0 else (),
        updated_at=_now(),
    )


def _now() -> dt.datetime:
    from core.clock import utcnow   # providers sit below services; the clock is a leaf module

    return utcnow()


__all__ = ["SandboxProvider", "SlowSandboxProvider", "ASSETS", "OUTCOMES", "asset", "sandbox_refund_address"]
