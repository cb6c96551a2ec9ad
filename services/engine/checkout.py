"""Buyer checkout of a payment link (docs/payment-links.md).

The rules: fixed links take no amount, customer-defined ones need one within bounds; a reusable
link creates an invoice each time; a single-use link reuses its open invoice, and once paid
refuses. With `origin_asset` + `refund_to` the invoice is quoted at once (awaiting_payment).

The link's token is public, so a single-use link's open invoice is handed back only to the buyer
who committed it: once it has a deposit address, a checkout that does not name that very asset and
refund address is 409 `invoice_already_committed`, and the link stays taken until that invoice ends
(expired or cancelled frees it; paid completes the link).

Concurrency: the decision "reuse or create" is made while holding the link's row lock
(infra/locks.py), so concurrent checkouts of one single-use link queue on that row and the
second one finds the first one's invoice.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Callable

from core import ids
from core.clock import isoformat
from core.errors import Conflict, Forbidden
from infra import locks
from models.base import db
from models.invoices import Invoice
from models.payment_links import PaymentLink
from models.stores import Store
from services import payment_links
from services.engine import invoice_states, invoices, quotes

OPEN = invoice_states.OPEN


@dataclass(frozen=True)
class CheckoutResult:
    invoice: Invoice
    reused: bool


def start_checkout(token: str, data: dict, *, now: dt.datetime, ttl_seconds: int,
                   get_provider: Callable[[], object] | None = None,
                   pricing: quotes.Pricing = quotes.NO_RATES) -> CheckoutResult:
    """Create or reuse the invoice for a buyer's checkout of the link behind `token`.

    `get_provider()` returns the swap provider; it is called only when `data` has `origin_asset`
    (and then `refund_to`), after the link and amount checks.
    """
    link = payment_links.get_public(token)
    # Cheap checks first, on the unlocked row; they are repeated under the lock below.
    _ensure_open(link, link.store)
    payment_links.check_checkout_amount(link, data.get("amount"))
    origin_asset = data.get("origin_asset")
    provider = get_provider() if origin_asset is not None else None
    if origin_asset is not None:
        # Asks the provider before anything is written: if it is down, the buyer gets a 503 and
        # no orphan invoice is left behind.
        quotes.find_asset(provider, origin_asset)
    with db.atomic():
        link = locks.lock_row(PaymentLink, link.id)
        store = Store.get_by_id(link.store_id)
        _ensure_open(link, store)
        amount = payment_links.check_checkout_amount(link, data.get("amount"))
        invoice = None if link.allow_multiple_payments else _open_invoice(link, now=now)
        reused = invoice is not None
        if reused and invoice.deposit_address:
            _ensure_same_buyer(invoice, origin_asset, data.get("refund_to"))
        if invoice is None:
            invoice = _create_invoice(link, store, amount, now=now, ttl_seconds=ttl_seconds)
            payment_links.mark_checkout_started(link, now=now)
        invoices.give_customer_email(invoice, data.get("customer_email"))
    if origin_asset is not None and invoice_states.can_quote(invoice) and invoice.deposit_address is None:
        # Outside the link's lock: a provider call must not hold it. Two checkouts of one single-use
        # link that both get here: the commit's compare-and-set lets the first address stand.
        try:
            invoice, _quote = quotes.commit(invoice, provider, origin_asset=origin_asset,
                                            refund_to=data["refund_to"], now=now, pricing=pricing)
        except Conflict as error:
            if error.code != quotes.ALREADY_COMMITTED:
                raise
            raise _link_taken(invoice) from None
    return CheckoutResult(invoice, reused)


def _ensure_same_buyer(invoice: Invoice, origin_asset: str | None, refund_to: str | None) -> None:
    """The committed invoice of a single-use link goes back only to the buyer who committed it."""
    if origin_asset is None:
        raise _link_taken(invoice)
    try:
        quotes.ensure_committed_to(invoice, origin_asset=origin_asset, refund_to=refund_to)
    except Conflict:
        raise _link_taken(invoice) from None


def _link_taken(invoice: Invoice) -> Conflict:
    return Conflict(quotes.ALREADY_COMMITTED,
                    "This single-use payment link is already being paid by someone else. It takes payments "
                    f"again only if that payment is not made by {isoformat(invoice.expires_at)}.")


def taken_until(link: PaymentLink, *, now: dt.datetime) -> dt.datetime | None:
    """When a single-use link someone is already paying is free again if that payment is not made
    (its open invoice's expiry); None when the link is not taken. What the buyer page tells."""
    if link.allow_multiple_payments:
        return None
    invoice = _open_invoice(link, now=now)
    return invoice.expires_at if invoice is not None and invoice.deposit_address else None


def _ensure_open(link: PaymentLink, store: Store) -> None:
    if link.status == "completed":
        raise Forbidden("payment_link_already_paid", "This single-use payment link has already been paid.")
    if link.status != "active":
        raise Forbidden("payment_link_unavailable", "This payment link is not accepting payments.")
    if not store.payout_wallet:
        raise Forbidden("payment_link_unavailable", "This store cannot accept payments yet.")


def _open_invoice(link: PaymentLink, *, now: dt.datetime) -> Invoice | None:
    """The single-use link's newest invoice that can still be paid. One past its `expires_at` is
    not reused even if the expiry sweep has not moved it yet: the buyer would get a dead invoice."""
    return (Invoice.select()
            .where((Invoice.store == link.store_id) & (Invoice.payment_link_id == link.public_id)
                   & Invoice.status.in_(OPEN) & (Invoice.expires_at > now))
            .order_by(Invoice.created_at.desc(), Invoice.id.desc()).first())


def _create_invoice(link: PaymentLink, store: Store, amount, *, now: dt.datetime, ttl_seconds: int) -> Invoice:
    return invoice_states.create(
        now=now,
        id=ids.new_uuid(),
        public_id=ids.new_public_id("inv_"),
        store=store.id,
        amount=amount,
        currency=link.currency,
        order_amount=amount,
        order_currency=link.currency,
        output_asset=store.output_asset,
        payment_link_id=link.public_id,
        expires_at=now + dt.timedelta(seconds=ttl_seconds),
    )
