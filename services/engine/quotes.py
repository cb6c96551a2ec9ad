"""Pricing an invoice in the buyer's asset, and committing to a deposit address (docs/payment-engine.md).

The merchant is owed the invoice's `payout_amount` of the store's `output_asset`: its amount at the
exchange rate fixed by the commit, less the operator's fee (services/engine/payout_terms.py,
docs/currencies.md). The provider quotes EXACT_OUTPUT, so the buyer's `amount_in` carries the swap
fee and the operator's.
"""
from __future__ import annotations

import datetime as dt
import logging

from core.errors import BadRequest, Conflict, Unavailable
from models.base import db
from models.invoices import Invoice
from models.stores import Store
from providers.base import Asset, ProviderRejected, ProviderUnavailable, Quote, QuoteRequest
from services.engine import invoice_states, payout_terms, poll_state
from services.engine.exchange_rates import RatePolicy
from services.engine.payout_terms import PayoutTerms, Pricing

log = logging.getLogger("tender.quotes")
# Without the operator's settings: no rate source (only a currency at par with the asset) and no fee.
NO_RATES = Pricing(RatePolicy(()))


def checkout_unavailable() -> Unavailable:
    """The buyer's 503 whenever the provider cannot answer, refused credentials included (the
    operator's to fix): never the provider's own words."""
    return Unavailable("checkout_unavailable", "Checkout is temporarily unavailable; retry shortly.")


def supported_assets(provider) -> list[Asset]:
    try:
        return sorted(provider.supported_assets(), key=lambda asset: asset.code)
    except ProviderUnavailable:
        raise checkout_unavailable() from None


def find_asset(provider, code) -> Asset:
    if isinstance(code, str):
        for asset in supported_assets(provider):
            if asset.code == code:
                return asset
    raise BadRequest("unsupported_asset", f"origin_asset {code!r} is not accepted; "
                     "GET /v1/public/assets lists the assets you can pay with.", param="origin_asset")


def _ensure_payable(invoice: Invoice, now: dt.datetime) -> None:
    if not invoice_states.can_quote(invoice) or now >= invoice.expires_at:
        raise BadRequest("invoice_not_payable",
                         f"Invoice {invoice.public_id} is {invoice.status}"
                         f"{' and past its expiry' if now >= invoice.expires_at else ''}; it takes no new quote.")


def _ask(provider, request: QuoteRequest) -> Quote:
    try:
        return provider.quote(request)
    except ProviderUnavailable:
        raise checkout_unavailable() from None
    except ProviderRejected as error:
        raise BadRequest("validation_error", f"refund_to: the swap provider refused the quote ({error})",
                          param="refund_to") from None


def price(invoice: Invoice, provider, *, origin_asset: str, refund_to: str | None, now: dt.datetime,
          pricing: Pricing = NO_RATES) -> tuple[Quote, PayoutTerms]:
    """A dry quote at today's rate: what the buyer would send, and the terms as an estimate.
    Moves pending -> quoted (no event)."""
    find_asset(provider, origin_asset)
    _ensure_payable(invoice, now)
    store = Store.get_by_id(invoice.store_id)
    terms = payout_terms.terms_for(invoice, store, pricing, now=now)
    quote = _ask(provider, _request(invoice, store, terms, pricing, origin_asset=origin_asset,
                                    recipient=store.payout_wallet or "", refund_to=refund_to or "", dry=True))
    invoice_states.move(invoice.id, "quote", now=now, origin_asset=origin_asset)
    return quote, terms


def _request(invoice: Invoice, store: Store, terms: PayoutTerms, pricing: Pricing, *, origin_asset: str,
             recipient: str, refund_to: str, dry: bool) -> QuoteRequest:
    return QuoteRequest(
        origin_asset=origin_asset, destination_asset=invoice.output_asset, amount_out=terms.amount_out,
        recipient=recipient, refund_to=refund_to, deadline=invoice.expires_at, dry=dry, reference=invoice.public_id,
        app_fee_bps=terms.fee_bps, app_fee_recipient=pricing.fee_account if terms.fee_bps else None)


def committed_fields(quote: Quote, *, refund_to: str, now: dt.datetime) -> dict:
    """What a committed quote writes on the invoice, whoever commits it (buyer route, checkout,
    test helper). `commit` also puts the invoice in the chain poller's hands at once (its poll state)."""
    return {"origin_asset": quote.origin_asset, "refund_to": refund_to, "deposit_address": quote.deposit_address,
            "deposit_memo": quote.deposit_memo, "amount_due": quote.amount_in, "quoted_at": now,
            "provider_ref": quote.correlation_id,
            "origin_decimals": quote.origin_decimals, "destination_decimals": quote.destination_decimals}


DEFAULT_MIN_REMAINING_SECONDS = 120


def time_needed_to_pay(invoice: Invoice, min_remaining_seconds: int) -> dt.timedelta:
    """How long before `expires_at` a deposit address may still be issued: the setting, but never
    more than a quarter of the invoice's lifetime (docs/payment-engine.md#money-is-never-left-unrecorded)."""
    return min(dt.timedelta(seconds=min_remaining_seconds), (invoice.expires_at - invoice.created_at) / 4)


def commit(invoice: Invoice, provider, *, origin_asset: str, refund_to: str, now: dt.datetime,
           min_remaining_seconds: int = DEFAULT_MIN_REMAINING_SECONDS,
           pricing: Pricing = NO_RATES) -> tuple[Invoice, Quote | None]:
    """A committed (wet) quote: the provider issues a deposit address; -> awaiting_payment. The
    exchange rate and the fee are fixed here, on the invoice, with the address.

    Repeating it on an invoice that already has its address returns that invoice unchanged. An
    invoice too close to its expiry is refused: the buyer could not pay the address in time.
    """
    find_asset(provider, origin_asset)
    if invoice.deposit_address:
        ensure_committed_to(invoice, origin_asset=origin_asset, refund_to=refund_to)
        if invoice.status == "awaiting_payment":
            return invoice, None            # the same buyer again (a double click): the same answer
    _ensure_payable(invoice, now)
    needed = time_needed_to_pay(invoice, min_remaining_seconds)
    if invoice.expires_at - now < needed:
        raise BadRequest("invoice_expiring",
                         f"Invoice {invoice.public_id} expires in less than {int(needed.total_seconds())} s; "
                         "too late to take a deposit address. Ask the merchant for a new invoice.")
    store = Store.get_by_id(invoice.store_id)
    if not store.payout_wallet:
        raise BadRequest("payout_wallet_not_configured", "The store has no payout wallet.")
    terms = payout_terms.terms_for(invoice, store, pricing, now=now)
    quote = _ask(provider, _request(invoice, store, terms, pricing, origin_asset=origin_asset,
                                    recipient=store.payout_wallet, refund_to=refund_to, dry=False))
    with db.atomic():
        moved = invoice_states.move(invoice.id, "commit_quote", now=now, guard=Invoice.expires_at >= now + needed,
                                    **committed_fields(quote, refund_to=refund_to, now=now),
                                    **payout_terms.committed_fields(terms, now=now))
        if moved is not None:
            poll_state.watch(moved, at=now)
    if moved is None:
        # A concurrent commit won: its address is the invoice's; ours is never shown to anyone, and
        # the invoice is ours to see only if we asked for the very same asset and refund address.
        log.info("commit lost a race on %s; keeping the first deposit address", invoice.public_id)
        current = Invoice.get_by_id(invoice.id)
        if current.deposit_address:
            ensure_committed_to(current, origin_asset=origin_asset, refund_to=refund_to)
        return current, None
    return moved, quote


ALREADY_COMMITTED = "invoice_already_committed"


def ensure_committed_to(invoice: Invoice, *, origin_asset: str, refund_to: str) -> None:
    """A committed invoice keeps its origin asset and refund address, and is shown as committed
    only to a caller who asks for those very ones (the buyer repeating the request). Anyone else
    would be handed a deposit address whose refunds go to somebody else: 409."""
    if (invoice.origin_asset, invoice.refund_to) != (origin_asset, refund_to):
        raise Conflict(ALREADY_COMMITTED,
                       f"Invoice {invoice.public_id} is already being paid with another asset or refund address; "
                       "they cannot change. If you did not start this payment, ask the merchant for a new invoice.")
