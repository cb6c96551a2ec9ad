"""The swap-provider interface: what the payment engine needs from a 1Click-style provider.

Amounts here are `Decimal` in whole units of the asset (1.5 USDC, not 1500000); converting
to and from smallest units is the adapter's job, because only it knows the wire format.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, fields
from decimal import Decimal
from typing import Protocol, Sequence

# The 1Click status names, kept verbatim: they are the provider's vocabulary, and the
# invoice state machine maps them to moves (docs/payment-engine.md).
PENDING_DEPOSIT = "PENDING_DEPOSIT"
KNOWN_DEPOSIT_TX = "KNOWN_DEPOSIT_TX"
PROCESSING = "PROCESSING"
SUCCESS = "SUCCESS"
INCOMPLETE_DEPOSIT = "INCOMPLETE_DEPOSIT"
REFUNDED = "REFUNDED"
FAILED = "FAILED"
STATUSES = (PENDING_DEPOSIT, KNOWN_DEPOSIT_TX, PROCESSING, SUCCESS, INCOMPLETE_DEPOSIT, REFUNDED, FAILED)
FINAL_STATUSES = (SUCCESS, REFUNDED, FAILED)


class ProviderError(Exception):
    """Base of the adapter's errors."""


class ProviderUnavailable(ProviderError):
    """Timeout, connection failure, 5xx or a garbled answer: worth retrying later."""


class ProviderAuthFailed(ProviderUnavailable):
    """401/403: the provider refuses our credentials. An operator-facing outage, not the buyer's
    mistake: buyers are told checkout is unavailable, polls keep their pace (docs/payment-engine.md)."""


class ProviderRejected(ProviderError):
    """The provider refused the request (4xx): retrying the same request will not help."""


@dataclass(frozen=True)
class Asset:
    code: str                 # our code: "btc", "usdc.eth" (docs/payment-engine.md)
    symbol: str               # "USDC"
    network: str              # "eth", "base", "near", "btc", ...
    decimals: int
    provider_asset_id: str    # the provider's id, e.g. "nep141:eth-0xa0b8...omft.near"
    price_usd: Decimal | None = None
    needs_memo: bool = False  # the network needs a memo/tag beside the address (e.g. stellar, ton)


@dataclass(frozen=True)
class QuoteRequest:
    origin_asset: str         # our asset code the buyer pays in
    destination_asset: str    # our asset code the merchant receives (store output_asset)
    amount_out: Decimal       # EXACT_OUTPUT: what the merchant must receive, whole units
    recipient: str            # the store's payout wallet
    refund_to: str            # the buyer's refund address on the origin network
    deadline: dt.datetime     # naive UTC; the invoice's expires_at
    dry: bool                 # True: price only, no deposit address
    reference: str | None = None  # our invoice id, for the provider's logs
    # The operator's fee, taken inside the swap (1Click `appFees`): basis points of the swap, paid to
    # `app_fee_recipient` (a NEAR Intents account). 0: none, and nothing is sent.
    app_fee_bps: int = 0
    app_fee_recipient: str | None = None


@dataclass(frozen=True)
class ReverseQuoteRequest:
    """A merchant refund: a swap the other way, always committed (docs/refunds.md). EXACT_INPUT: the
    merchant sends exactly `amount_in` of the store's output asset; the buyer receives what it buys."""
    origin_asset: str         # the store's output asset, which the merchant sends
    destination_asset: str    # the buyer's asset
    amount_in: Decimal        # what the merchant sends, whole units
    recipient: str            # the buyer's refund address on the destination network
    refund_to: str            # the store's payout wallet: where a failed refund swap sends the money back
    deadline: dt.datetime     # naive UTC; the funding deadline
    reference: str | None = None  # our refund id, for the provider's logs


@dataclass(frozen=True)
class Quote:
    origin_asset: str
    destination_asset: str
    amount_in: Decimal            # what the buyer must send, whole origin units
    amount_out: Decimal           # what the merchant receives, whole destination units
    amount_in_usd: Decimal | None
    deadline: dt.datetime
    deposit_address: str | None   # None for a dry quote
    deposit_memo: str | None = None
    correlation_id: str | None = None
    time_estimate_seconds: int | None = None
    # The assets' decimals at quote time: kept on the invoice and handed back to deposit_status,
    # so a status read never depends on the provider's current token list.
    origin_decimals: int | None = None
    destination_decimals: int | None = None


@dataclass(frozen=True)
class DepositStatus:
    status: str                                   # one of STATUSES
    correlation_id: str | None = None
    amount_in: Decimal | None = None              # deposited, whole origin units
    amount_in_usd: Decimal | None = None
    amount_out: Decimal | None = None             # delivered, whole destination units
    amount_out_usd: Decimal | None = None
    refunded_amount: Decimal | None = None        # whole origin units, returned to the buyer so far
    refunded_amount_usd: Decimal | None = None
    # Every origin-chain transaction the provider lists (deposits and refunds, in no promised
    # order); `deposit_tx_hash` is set only when the answer itself says which one is the deposit.
    origin_tx_hashes: tuple[str, ...] = field(default_factory=tuple)
    deposit_tx_hash: str | None = None
    destination_tx_hashes: tuple[str, ...] = field(default_factory=tuple)  # payout to merchant
    refund_tx_hashes: tuple[str, ...] = field(default_factory=tuple)
    updated_at: dt.datetime | None = None


@dataclass(frozen=True)
class DepositQuery:
    """One deposit to ask about, as `deposit_status` takes it."""
    address: str
    memo: str | None = None
    decimals: tuple[int, int] | None = None     # (origin, destination) as recorded from the quote


# What NUMERIC(36,18) holds: below 10**18 whole units.
AMOUNT_LIMIT = Decimal(10) ** 18
# Statuses that carry the deposited amount: without it nothing can be recorded or valued.
NEEDS_AMOUNT_IN = (PROCESSING, SUCCESS, INCOMPLETE_DEPOSIT)


def untrusted_reason(status: DepositStatus) -> str | None:
    """Why a provider answer cannot be applied as it is, or None when it can (docs/payment-engine.md).

    Every adapter's `DepositStatus` passes here before the payment engine reads it: the provider's
    numbers are input, not truth. The reasons are a closed set (they label a metric)."""
    if status.status not in STATUSES:
        return "unknown_status"
    for spec in fields(DepositStatus):
        value = getattr(status, spec.name)
        if spec.name.startswith(("amount_", "refunded_")) and value is not None:
            if not _is_amount(value):
                return "invalid_amount"
    if status.status in NEEDS_AMOUNT_IN and status.amount_in is None:
        return "missing_amount"
    if (status.refunded_amount is not None and status.amount_in is not None
            and status.refunded_amount > status.amount_in):
        return "invalid_amount"          # more refunded than deposited
    return None


def _is_amount(value) -> bool:
    # Extra fractional digits (24-decimal NEAR) are fine: the column rounds them; the whole part is not.
    return isinstance(value, Decimal) and value.is_finite() and 0 <= value < AMOUNT_LIMIT


class SwapProvider(Protocol):
    name: str

    def supported_assets(self) -> list[Asset]: ...

    def quote(self, request: QuoteRequest) -> Quote: ...

    def reverse_quote(self, request: ReverseQuoteRequest) -> Quote:
        """A committed EXACT_INPUT quote with a deposit address: `amount_out` is an estimate."""

    def deposit_status(self, deposit_address: str, deposit_memo: str | None = None, *,
                       decimals: tuple[int, int] | None = None) -> DepositStatus:
        """`decimals`: (origin, destination) as recorded from the quote, when known."""


class ReadsManyStatuses(Protocol):
    """Offered by a provider that answers many status reads at once cheaper than one by one (the
    sandbox: one SELECT). The pollers use it for a claimed batch; with any other provider they ask
    each deposit on its own, concurrently (1Click: one HTTP request each)."""

    def deposit_statuses(self, deposits: Sequence[DepositQuery]) -> list[DepositStatus | ProviderError]:
        """One answer per deposit, in order: its status, or the error `deposit_status` would have
        raised for it alone."""
