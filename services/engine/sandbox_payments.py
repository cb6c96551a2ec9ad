"""The sandbox payment helpers (docs/payment-engine.md): simulate a buyer's deposit on the sandbox chain.

Only the deposit is simulated; the ordinary polling and settlement jobs then move the invoice,
exactly as they would with the real provider.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

from core.errors import BadRequest
from models.invoices import Invoice
from models.refunds import Refund
from providers.sandbox import sandbox_refund_address
from services.engine import invoice_states, poll_state, quotes
from services.engine.payout_terms import Pricing

DEFAULT_ORIGIN_ASSET = "usdc.eth"


def simulate_payment(invoice: Invoice, provider, *, outcome: str | None, amount: Decimal | None,
                     origin_asset: str | None, refund_to: str | None, now: dt.datetime,
                     pricing: Pricing = quotes.NO_RATES) -> Invoice:
    if not invoice.deposit_address:
        if not invoice_states.can_quote(invoice):
            raise BadRequest("invoice_not_payable",
                             f"Invoice {invoice.public_id} is {invoice.status} and has no deposit address.")
        origin_asset = origin_asset or DEFAULT_ORIGIN_ASSET
        quotes.find_asset(provider, origin_asset)
        invoice, _quote = quotes.commit(invoice, provider, origin_asset=origin_asset,
                                        refund_to=refund_to or sandbox_refund_address(origin_asset), now=now,
                                        pricing=pricing)
    # A second call on the same address records nothing new: one simulated deposit per address.
    provider.record_deposit(invoice.deposit_address, outcome=outcome, amount=amount, now=now)
    poll_state.watch(invoice, at=now)   # poll it now
    return Invoice.get_by_id(invoice.id)


def simulate_funding(refund: Refund, provider, *, outcome: str, amount: Decimal | None, now: dt.datetime) -> None:
    """The merchant's funding of a refund, on the sandbox chain (docs/refunds.md#the-sandbox):
    `success` (the whole funding amount, or `amount`: more is too large, less stays short), `short`
    (half, or `amount`; the provider sends it back at the deadline) or `failed` (the refund swap
    fails and the provider sends the funding back to the payout wallet)."""
    if outcome == "success" and amount is not None and amount != refund.funding_amount:
        outcome = "overpaid" if amount > refund.funding_amount else "short"
    simulated = {"success": "success", "overpaid": "overpaid", "short": "short", "failed": "refunded"}[outcome]
    # One simulated deposit per address: a second call records nothing new.
    provider.record_deposit(refund.deposit_address, outcome=simulated, amount=amount, now=now)
    poll_state.watch(refund, at=now)   # poll it now
