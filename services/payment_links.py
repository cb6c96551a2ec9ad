"""Payment links (docs/payment-links.md): the merchant's verbs and queries, and the buyer's look-up.

Checkout lives in services/engine/checkout.py, and a link's transactions in
services/engine/transactions.py: the engine calls this module (`on_invoice_paid` when an invoice is
paid, the amount rules at checkout), so it imports nothing of the engine (.importlinter).
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

from core import ids, money
from core.errors import BadRequest, NotFound, validation_error
from infra import lookups
from infra.pagination import Page, PageRequest, paginate
from models.invoices import Invoice
from models.payment_links import AMOUNT_MODES, CUSTOMER_DEFINED, FIXED, PaymentLink
from models.stores import Store

PRICING_FIELDS = ("amount_mode", "amount", "min_amount", "max_amount")


def resolve_pricing(current: dict, changes: dict) -> dict:
    """The pricing after applying `changes` to `current` (both {field: value}; create passes {}).

    Fixed mode needs `amount` and refuses bounds; customer-defined mode refuses `amount` and
    wants `min_amount` ≤ `max_amount` when both are set. Switching mode drops the old mode's
    fields, so a PATCH that switches need only name the new ones. A null clears a bound.
    """
    mode = changes.get("amount_mode", current.get("amount_mode"))
    if mode not in AMOUNT_MODES:
        raise validation_error("amount_mode", f"must be one of {', '.join(AMOUNT_MODES)}")
    same_mode = mode == current.get("amount_mode")
    if mode == FIXED:
        for name in ("min_amount", "max_amount"):
            if changes.get(name) is not None:
                raise validation_error(name, f"is not allowed with amount_mode {FIXED}")
        amount = changes["amount"] if "amount" in changes else (current.get("amount") if same_mode else None)
        if amount is None:
            raise validation_error("amount", f"is required with amount_mode {FIXED}")
        return {"amount_mode": mode, "amount": amount, "min_amount": None, "max_amount": None}
    if changes.get("amount") is not None:
        raise validation_error("amount", f"is not allowed with amount_mode {CUSTOMER_DEFINED}; "
                                         "use min_amount and max_amount")
    bounds = {name: changes[name] if name in changes else (current.get(name) if same_mode else None)
              for name in ("min_amount", "max_amount")}
    if None not in bounds.values() and bounds["min_amount"] > bounds["max_amount"]:
        raise validation_error("max_amount", "must be greater than or equal to min_amount")
    return {"amount_mode": mode, "amount": None, **bounds}


def _pricing_of(link: PaymentLink) -> dict:
    return {name: getattr(link, name) for name in PRICING_FIELDS}


def create_link(store: Store, data: dict, *, now: dt.datetime,
                supported_currencies: tuple[str, ...]) -> PaymentLink:
    if data["currency"] not in supported_currencies:
        raise validation_error("currency", f"must be one of {', '.join(supported_currencies)}")
    pricing = resolve_pricing({}, {name: data[name] for name in PRICING_FIELDS if name in data})
    return PaymentLink.create(
        id=ids.new_uuid(), public_id=ids.new_public_id("plink_"), plpub_id=ids.new_public_id("plpub_"),
        store=store.id, title=data["title"], currency=data["currency"],
        allow_multiple_payments=data["allow_multiple_payments"], public_visible=data["public_visible"],
        status="active", created_at=now, updated_at=now, **pricing,
    )


def get_for_store(store: Store, public_id: str) -> PaymentLink:
    return lookups.one_in_store(PaymentLink, store, public_id, prefix="plink_", code="payment_link_not_found",
                                noun="payment link")


def get_public(token: str) -> PaymentLink:
    """The link behind a buyer's `plpub_` token: 32-hex tokens, or legacy 12-character ones."""
    link = None
    if ids.is_public_id(token, "plpub_"):
        column = PaymentLink.plpub_id if len(token) == len("plpub_") + 32 else PaymentLink.legacy_plpub_id
        link = (PaymentLink.select(PaymentLink, Store).join(Store)
                .where(column == token).first())
    if link is None:
        raise NotFound("payment_link_not_found", "No such payment link.")
    return link


def list_for_store(store: Store, filters: dict, page: PageRequest) -> Page:
    query = PaymentLink.select().where(PaymentLink.store == store.id)
    if filters.get("status") is not None:
        query = query.where(PaymentLink.status == filters["status"])
    return paginate(query, PaymentLink, page, prefix="plink_", scope=PaymentLink.store == store.id)


def update_link(link: PaymentLink, changes: dict, *, now: dt.datetime) -> PaymentLink:
    """PATCH: any of title, pricing, allow_multiple_payments, public_visible."""
    current = _pricing_of(link)
    for name in ("amount", "min_amount", "max_amount"):
        money.check_fiat_places(changes.get(name), link.currency, name)
    pricing = resolve_pricing(current, {name: changes[name] for name in PRICING_FIELDS if name in changes})
    if link.checkout_started_at is not None:
        changed = [name for name in PRICING_FIELDS if pricing[name] != current[name]]
        if changed:
            raise BadRequest("pricing_locked", "A checkout has started on this link, so its pricing "
                             "can no longer change; create a new link instead.", param=changed[0])
    if (link.status == "completed" and "allow_multiple_payments" in changes
            and changes["allow_multiple_payments"] != link.allow_multiple_payments):
        raise BadRequest("activation_refused", "This single-use link has been paid and stays completed; "
                         "create a new link instead.", param="allow_multiple_payments")
    fields = {**pricing, **{name: changes[name] for name in ("title", "allow_multiple_payments", "public_visible")
                            if name in changes}}
    # Only the checkout's lock-holder may change pricing once a checkout starts: the condition on
    # checkout_started_at keeps a concurrent first checkout from seeing a half-applied price.
    condition = (PaymentLink.id == link.id)
    if any(pricing[name] != current[name] for name in PRICING_FIELDS):
        condition &= PaymentLink.checkout_started_at.is_null()
    if PaymentLink.update(updated_at=now, **fields).where(condition).execute() == 0:
        raise BadRequest("pricing_locked", "A checkout started on this link meanwhile, so its pricing "
                         "can no longer change.")
    return PaymentLink.get_by_id(link.id)


def activate(link: PaymentLink, *, now: dt.datetime) -> PaymentLink:
    PaymentLink.update(status="active", updated_at=now).where(
        (PaymentLink.id == link.id) & (PaymentLink.status == "inactive")).execute()
    link = PaymentLink.get_by_id(link.id)
    if link.status == "completed":
        raise BadRequest("activation_refused", "This single-use link has been paid; it cannot be "
                         "activated again. Create a new link instead.")
    return link


def deactivate(link: PaymentLink, *, now: dt.datetime) -> PaymentLink:
    """Active → inactive. A completed link stays completed; deactivating it again changes nothing."""
    PaymentLink.update(status="inactive", updated_at=now).where(
        (PaymentLink.id == link.id) & (PaymentLink.status == "active")).execute()
    return PaymentLink.get_by_id(link.id)


def list_invoices(link: PaymentLink, page: PageRequest) -> Page:
    scope = (Invoice.store == link.store_id) & (Invoice.payment_link_id == link.public_id)
    return paginate(Invoice.select().where(scope), Invoice, page, prefix="inv_", scope=scope)


def mark_checkout_started(link: PaymentLink, *, now: dt.datetime) -> None:
    PaymentLink.update(checkout_started_at=now, updated_at=now).where(
        (PaymentLink.id == link.id) & PaymentLink.checkout_started_at.is_null()).execute()


def on_invoice_paid(invoice: Invoice, *, now: dt.datetime) -> bool:
    """A single-use link is used up by its first paid invoice: active/inactive → completed.

    Called by invoice_states.move() inside the transaction that moves the invoice to `paid`, so
    the link and the invoice change together. Repeats (settle, replays) change nothing.
    """
    if not invoice.payment_link_id:
        return False
    return PaymentLink.update(status="completed", completed_at=now, updated_at=now).where(
        (PaymentLink.public_id == invoice.payment_link_id) & (PaymentLink.store == invoice.store_id)
        & (PaymentLink.allow_multiple_payments == False)  # noqa: E712 (peewee expression)
        & PaymentLink.status.in_(("active", "inactive"))).execute() > 0


def check_checkout_amount(link: PaymentLink, amount: Decimal | None) -> Decimal:
    """Checkout rules 1 and 2: the amount the new invoice is for."""
    if link.amount_mode == FIXED:
        if amount is not None:
            raise validation_error("amount", "is not accepted: this link has a fixed amount")
        return link.amount
    if amount is None:
        raise validation_error("amount", "is required: this link lets the buyer choose the amount")
    money.check_fiat_places(amount, link.currency, "amount")
    low, high = link.min_amount, link.max_amount
    if (low is not None and amount < low) or (high is not None and amount > high):
        low_text, high_text = money.format_fiat(low, link.currency), money.format_fiat(high, link.currency)
        raise BadRequest("amount_out_of_range", f"amount must be {_range_text(low_text, high_text)}.",
                         param="amount", details={"min_amount": low_text, "max_amount": high_text})
    return amount


def _range_text(low: str | None, high: str | None) -> str:
    if low is not None and high is not None:
        return f"between {low} and {high}"
    return f"at least {low}" if low is not None else f"at most {high}"
