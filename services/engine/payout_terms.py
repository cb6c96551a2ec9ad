"""What the merchant is owed for an invoice, and what the quote asks the provider to deliver
(docs/currencies.md#how-a-price-becomes-a-payout).

`amount` in the invoice currency × the rate = `payout_amount` in the output asset (at par when the
asset is worth the invoice currency); the operator's fee comes out of it, so the quote's exact
output is `payout_amount × (1 − fee_bps/10000)`, rounded down to the asset's smallest unit. The rate
and the fee are fixed when the buyer commits; a dry quote shows the same terms as an estimate.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal

from core import money
from models.invoices import Invoice
from models.stores import Store
from services.engine.exchange_rates import FixedRate, RatePolicy, rate_for

# Payout amounts are kept to the micro-unit: the smallest unit of the dollar and euro stablecoins on
# most chains (6 decimals), and far below one cent on those with more.
PAYOUT_UNIT = Decimal("0.000001")
BPS = Decimal(10000)


@dataclass(frozen=True)
class Pricing:
    """The operator's settings that price a commit: the rate sources and the default fee."""
    rates: RatePolicy
    fee_bps: int = 0
    fee_account: str | None = None

    @classmethod
    def of(cls, settings) -> Pricing:
        return cls(RatePolicy.of(settings), settings.operator_fee_bps, settings.operator_fee_account)


@dataclass(frozen=True)
class PayoutTerms:
    rate: FixedRate | None          # None at par
    payout_amount: Decimal          # output-asset units the invoice is worth to the merchant
    fee_bps: int
    amount_out: Decimal             # the quote's exact output: the payout less the fee
    fee_amount: Decimal | None      # the fee in the invoice currency; None when there is none


def fee_bps_for(store: Store, pricing: Pricing) -> int:
    """The store's own fee, else the operator's; none while there is no account to pay it to (a store
    fee set before OPERATOR_FEE_ACCOUNT was removed)."""
    if pricing.fee_account is None:
        return 0
    return pricing.fee_bps if store.fee_bps is None else store.fee_bps


def terms_for(invoice: Invoice, store: Store, pricing: Pricing, *, now: dt.datetime) -> PayoutTerms:
    """The terms at today's rate (raises `exchange_rate_unavailable` when there is none)."""
    rate = rate_for(invoice.currency, invoice.output_asset, pricing.rates, now=now)
    return terms_at(invoice.amount, invoice.currency, rate, fee_bps_for(store, pricing))


def terms_at(amount: Decimal, currency: str, rate: FixedRate | None, fee_bps: int) -> PayoutTerms:
    payout = (amount * (rate.rate if rate else 1)).quantize(PAYOUT_UNIT, rounding=ROUND_HALF_UP)
    amount_out = (payout * (BPS - fee_bps) / BPS).quantize(PAYOUT_UNIT, rounding=ROUND_DOWN)
    fee = None
    if fee_bps:
        fee = to_invoice_currency(payout - amount_out, currency, rate)
    return PayoutTerms(rate, payout, fee_bps, amount_out, fee)


def to_invoice_currency(units: Decimal, currency: str, rate: FixedRate | Decimal | None) -> Decimal:
    """Output-asset units back in the invoice currency at the fixed rate, to its minor units."""
    value = rate.rate if isinstance(rate, FixedRate) else rate
    in_currency = units / value if value else units
    return in_currency.quantize(money.minor_unit(currency), rounding=ROUND_HALF_UP)


def committed_fields(terms: PayoutTerms, *, now: dt.datetime) -> dict:
    """What a commit writes on the invoice about its terms."""
    return {"exchange_rate": terms.rate.rate if terms.rate else None,
            "exchange_rate_source": terms.rate.source if terms.rate else None,
            "exchange_rate_fixed_at": now if terms.rate else None,
            "payout_amount": terms.payout_amount, "fee_bps": terms.fee_bps, "fee_amount": terms.fee_amount}


def promised_amount_out(invoice: Invoice) -> Decimal:
    """What the committed quote asked the provider to deliver: the payout less the fee (an invoice
    committed before rates and fees existed: its amount, at par)."""
    if invoice.payout_amount is None:
        return invoice.amount
    return terms_at_fixed(invoice).amount_out


def terms_at_fixed(invoice: Invoice) -> PayoutTerms:
    """The invoice's own terms, from what its commit stored."""
    rate = None
    if invoice.exchange_rate is not None:
        rate = FixedRate(invoice.currency, "", invoice.exchange_rate, invoice.exchange_rate_source or "")
    return terms_at(invoice.amount, invoice.currency, rate, invoice.fee_bps or 0)
