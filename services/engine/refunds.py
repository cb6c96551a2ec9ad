"""Merchant refunds (docs/refunds.md): create, read and cancel one, and what a provider status
means for it. Shared by the HTTP handlers, the poller and the sweeps.

A refund is a swap in the other direction: the merchant sends `funding_amount` of the store's
output asset (a USD stablecoin, at par with the invoice currency) to a one-time deposit address;
the provider swaps it into the buyer's asset and delivers it to the buyer's address, or, if the
swap fails, sends it back to the store's payout wallet (`refundTo`).

Money rule: an invoice's refunds that hold an amount (awaiting funds, processing, succeeded) never
add up to more than it received. Creating one locks the invoice row, re-reads that sum and writes
the refund with its event in the same transaction, so concurrent creates are applied one after the
other; a refund that expires, is cancelled or fails stops holding its amount by its move alone.
"""
from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal
import logging

from core import ids, money, networks
from core.networks import network_of
from core.errors import BadRequest, Conflict, Forbidden, NotFound, Unavailable, validation_error
from infra import lookups
from infra.locks import lock_row
from infra.pagination import Page, PageRequest, paginate
from models.base import db
from models.invoices import Invoice
from models.refunds import Refund
from models.stores import ApiKey, Store
from providers import base
from providers.base import ProviderError, ProviderRejected, ProviderUnavailable, ReverseQuoteRequest
from services import integrations
from services.engine import deposits, payout_terms, poll_state, refund_answers, refund_states

log = logging.getLogger("tender.refunds")
# How long the merchant has to send the funding: the deposit address's deadline.
FUNDING_WINDOW = dt.timedelta(hours=1)
REVIEW_AFTER_DEADLINE = dt.timedelta(hours=1)


# --- who may refund what -------------------------------------------------------------------

def _installation_of(key: ApiKey):
    """The installation whose invoices an integration key may refund and read (None: another kind of key)."""
    if key.kind != "integration":
        return None
    integration = integrations.for_key(key)
    return integration.id if integration is not None else ids.new_uuid()   # a hand-made key: no invoice


def ensure_key_may_refund(key: ApiKey, invoice: Invoice) -> None:
    """A storefront's integration key refunds only the invoices its installation created."""
    installation = _installation_of(key)
    if installation is not None and invoice.integration_id != installation:
        raise Forbidden("integration_key_forbidden",
                        "An integration key refunds only the invoices its installation created.")


def ensure_key_may_send_to(key: ApiKey, invoice: Invoice, data: dict) -> None:
    """A storefront's integration key refunds only to the buyer's own asset and refund address: a
    compromised shop must not be able to have the merchant fund a refund to itself."""
    if key.kind != "integration":
        return
    for field, own in (("asset", invoice.origin_asset), ("refund_to", invoice.refund_to)):
        if data.get(field) is not None and data[field] != own:
            raise Forbidden("integration_key_forbidden", f"{field}: an integration key refunds only to the buyer's "
                            "own asset and refund address; leave it out.", param=field)


# --- money ---------------------------------------------------------------------------------

def refundable_amount(invoice: Invoice) -> Decimal:
    """What the invoice may still refund: what it received, less every refund holding an
    amount (refund_states.holds_amount: funding seen counts, whatever the refund's state)."""
    if not is_refundable_state(invoice):
        return Decimal(0)
    holding = (Refund.select(Refund.amount)
               .where((Refund.invoice == invoice.id) & refund_states.holds_amount()))
    return _left_after(invoice, holding)


def _left_after(invoice: Invoice, holding) -> Decimal:
    return invoice.received_amount - sum((row.amount for row in holding), Decimal(0))


def of_invoice(invoice: Invoice, *, limit: int = 100) -> tuple[list[Refund], Decimal]:
    """An invoice's refunds, newest first (at most `limit`), and what it may still refund: one read
    when they all fit, each row saying whether it holds its amount (the dashboard's invoice page)."""
    rows = list(Refund.select(Refund, refund_states.holds_amount().alias("holds_its_amount"))
                .where(Refund.invoice == invoice.id)
                .order_by(Refund.created_at.desc(), Refund.id.desc()).limit(limit + 1))
    for row in rows:
        row.invoice = invoice                      # already read: no join, no read per row
    if len(rows) > limit:
        return rows[:limit], refundable_amount(invoice)
    if not is_refundable_state(invoice):
        return rows, Decimal(0)
    return rows, _left_after(invoice, [row for row in rows if row.holds_its_amount])


def is_refundable_state(invoice: Invoice) -> bool:
    """Paid and settled: the stablecoin is in the merchant's wallet."""
    return invoice.status == "paid" and invoice.swap_status is None and invoice.received_amount is not None


def _over_refundable(invoice: Invoice) -> BadRequest:
    left = refundable_amount(invoice)
    return BadRequest("refund_exceeds_refundable",
                      f"amount: at most {money.format_fiat(left, invoice.currency)} {invoice.currency} of invoice {invoice.public_id} "
                      "can still be refunded.", param="amount")


# --- create --------------------------------------------------------------------------------

def funding_amount(invoice: Invoice, amount: Decimal) -> Decimal:
    """What the merchant sends, in the store's payout asset, to refund `amount` of the invoice's
    currency: that part of the payout at the rate the invoice's commit fixed, whatever the rate does
    later (docs/currencies.md); at par, the amount itself. The one place it is computed."""
    if invoice.exchange_rate is None:
        return amount
    return (amount * invoice.exchange_rate).quantize(payout_terms.PAYOUT_UNIT, rounding=ROUND_HALF_UP)


def create_refund(invoice: Invoice, key: ApiKey, data: dict, provider, *, now: dt.datetime) -> Refund:
    """Quote the reverse swap and persist an `awaiting_funds` refund with its `refund.created` event."""
    ensure_key_may_refund(key, invoice)
    ensure_key_may_send_to(key, invoice, data)
    if not is_refundable_state(invoice):
        raise BadRequest("invoice_not_refundable",
                         f"Invoice {invoice.public_id} is {invoice.status}"
                         f"{' and still converting' if invoice.swap_status else ''}; only a paid, settled "
                         "invoice can be refunded.")
    amount = data["amount"]
    money.check_fiat_places(amount, invoice.currency, "amount")
    if funding_amount(invoice, amount) <= 0:
        raise validation_error("amount", "is worth less than the payout asset's smallest unit at the invoice's rate")
    if amount > refundable_amount(invoice):
        raise _over_refundable(invoice)
    store = Store.get_by_id(invoice.store_id)
    if not store.payout_wallet:
        raise BadRequest("payout_wallet_not_configured", "The store has no payout wallet.")
    asset, refund_to = _destination(invoice, provider, data)
    deadline = now + FUNDING_WINDOW
    quote = _ask(provider, ReverseQuoteRequest(
        origin_asset=invoice.output_asset, destination_asset=asset, amount_in=funding_amount(invoice, amount),
        recipient=refund_to,
        refund_to=store.payout_wallet, deadline=deadline, reference=invoice.public_id))
    with db.atomic():
        current = lock_row(Invoice, invoice.id)
        if amount > refundable_amount(current):
            # A concurrent refund took it first: this quote's address is never shown to anyone.
            raise _over_refundable(current)
        refund = refund_states.create(
            now=now, id=ids.new_uuid(), public_id=ids.new_public_id("ref_"), store=invoice.store_id,
            invoice=invoice.id, amount=amount, currency=invoice.currency, reason=data.get("reason"), asset=asset,
            refund_to=refund_to, estimated_amount_out=quote.amount_out, funding_asset=invoice.output_asset,
            funding_amount=quote.amount_in, deposit_address=quote.deposit_address,
            deposit_memo=quote.deposit_memo, expires_at=deadline, provider_ref=quote.correlation_id,
            origin_decimals=quote.origin_decimals, destination_decimals=quote.destination_decimals,
            quoted_at=now)
        poll_state.watch(refund, at=now)      # the funding is polled from now on
        return refund


def _destination(invoice: Invoice, provider, data: dict) -> tuple[str, str]:
    """The buyer's asset and address: as given, else what the buyer used at checkout. An address
    is checked against the asset's network; the buyer's own is reused only on the same network."""
    code = data.get("asset") or invoice.origin_asset
    if code is None:
        raise validation_error("asset", "is required: the invoice has no asset the buyer paid with")
    try:
        assets = {asset.code: asset for asset in provider.supported_assets()}
    except ProviderUnavailable:
        raise _provider_unavailable() from None
    asset = assets.get(code)
    if asset is None:
        raise BadRequest("unsupported_asset", f"asset {code!r} is not offered; GET /v1/public/assets lists "
                         "the assets.", param="asset")
    refund_to = data.get("refund_to")
    if refund_to is None:
        paid_from = assets.get(invoice.origin_asset or "")
        paid_network = paid_from.network if paid_from else network_of(invoice.origin_asset or "")
        if not invoice.refund_to or paid_network != asset.network:
            raise validation_error("refund_to", f"is required: the buyer's checkout address is not on "
                                                f"{networks.label(asset.network)}")
        refund_to = invoice.refund_to
    if not networks.address_looks_valid(asset.network, refund_to):
        raise validation_error("refund_to", f"is not a valid {networks.label(asset.network)} address")
    return asset.code, refund_to


def _provider_unavailable() -> Unavailable:
    return Unavailable("provider_unavailable", "The swap provider is unavailable; retry the refund shortly.")


def _ask(provider, request: ReverseQuoteRequest):
    try:
        return provider.reverse_quote(request)
    except ProviderUnavailable:
        raise _provider_unavailable() from None
    except ProviderRejected as error:
        raise BadRequest("validation_error", f"refund_to: the swap provider refused the refund ({error})",
                         param="refund_to") from None


# --- read ----------------------------------------------------------------------------------

def _with_invoice():
    # The invoice's public id is part of every refund's JSON: join once, never per row.
    return Refund.select(Refund, Invoice).join(Invoice)


def get_for_store(store: Store, public_id: str, key: ApiKey | None = None) -> Refund:
    refund = lookups.one_in_store(Refund, store, public_id, prefix="ref_", code="refund_not_found", noun="refund",
                                  query=_with_invoice())
    installation = _installation_of(key) if key is not None else None
    if installation is not None and refund.invoice.integration_id != installation:
        raise NotFound("refund_not_found", f"No refund {public_id!r} in this store.")
    return refund


def get_public(public_id: str) -> Refund:
    """Any store's refund by its unguessable id: the funding page."""
    refund = _with_invoice().where(Refund.public_id == public_id).first() if ids.is_public_id(public_id, "ref_") \
        else None
    if refund is None:
        raise NotFound("refund_not_found", f"No refund {public_id!r}.")
    return refund


def list_for_store(store: Store, key: ApiKey, filters: dict, page: PageRequest) -> Page:
    # A listed refund shows its invoice's public id alone: every other column of the invoice, read and
    # converted for every row, were most of a page's time (bench/dashboard_pages.py).
    listed = Refund.select(Refund, Invoice.id, Invoice.public_id).join(Invoice)
    query = lookups.narrowed(listed.where(Refund.store == store.id), filters, equal={
        "status": Refund.status, "invoice_id": Invoice.public_id})
    installation = _installation_of(key)
    if installation is not None:
        query = query.where(Invoice.integration_id == installation)
    return paginate(query, Refund, page, prefix="ref_", scope=Refund.store == store.id)


# --- cancel --------------------------------------------------------------------------------

def cancel(refund: Refund, key: ApiKey, provider, *, now: dt.datetime, timeout_seconds: float = 3) -> Refund:
    """Cancel a refund nobody funded yet, once the provider rules a funding deposit out (as an
    invoice's cancel does). It stays watched: funding that crossed the cancel is still recorded."""
    ensure_key_may_refund(key, refund.invoice)
    if refund.status == "awaiting_funds" and refund.deposit_seen_at is None:
        try:
            status = deposits.ask_deposit_status(provider, refund, timeout_seconds=timeout_seconds)
        except ProviderError as error:
            raise deposits.cannot_rule_out(refund, error, money="funding") from None
        if status.status != base.PENDING_DEPOSIT:
            refund_answers.apply_funding_status(refund, status, now=now)
            raise Conflict("refund_not_cancellable", f"Refund {refund.public_id} has funding the provider "
                           "already knows; it can no longer be cancelled.")
    moved = refund_states.move(refund.id, "cancel", now=now)
    if moved is None:
        raise BadRequest("refund_not_cancellable", f"Refund {refund.public_id} is {refund.status}; only a refund "
                         "awaiting funds, with no funding seen, can be cancelled.")
    return moved


# --- expiry --------------------------------------------------------------------------------

def expire_due(provider, *, now: dt.datetime, timeout_seconds: float = 3, batch_size: int = 200) -> int:
    """Close the funding windows past their deadline: expire unfunded refunds, and free the amount
    of cancelled ones, each only once the provider rules funding out (a known deposit is applied
    instead, which keeps the refund going). Returns how many windows it closed."""
    closed = 0
    unfunded = Refund.deposit_seen_at.is_null() & (Refund.expires_at <= now)
    window_open = (Refund.status == "awaiting_funds") | (
        (Refund.status == "cancelled") & Refund.funding_closed_at.is_null())
    due = list(Refund.select().where(unfunded & window_open).order_by(Refund.expires_at, Refund.id).limit(batch_size))
    for refund in due:
        try:
            status = deposits.ask_deposit_status(provider, refund, timeout_seconds=timeout_seconds)
        except ProviderError as error:
            log.warning("expiry of %s postponed, provider unavailable: %s", refund.public_id, error)
            break                                  # the next sweep asks again
        if status.status != base.PENDING_DEPOSIT:
            refund_answers.apply_funding_status(refund, status, now=now)
            continue
        closed += _close_funding_window(refund, now=now)
    return closed


def _close_funding_window(refund: Refund, *, now: dt.datetime) -> bool:
    """No funding came in time: no swap can deliver any more, so the refund's amount is free."""
    if refund.status == "awaiting_funds":
        return refund_states.move(refund.id, "expire", now=now, funding_closed_at=now) is not None
    return Refund.update(funding_closed_at=now, updated_at=now).where(
        (Refund.id == refund.id) & (Refund.status == "cancelled") & Refund.deposit_seen_at.is_null()
        & Refund.funding_closed_at.is_null()).execute() == 1


def stuck(*, now: dt.datetime) -> list[Refund]:
    """Refunds held for review (whatever their state), and funded ones still processing an hour
    after their deadline: what `flask --app wsgi refunds stuck` lists for an operator."""
    late = (Refund.status == "processing") & (Refund.expires_at < now - REVIEW_AFTER_DEADLINE)
    return list(_with_invoice().where(late | Refund.review_reason.is_null(False)).order_by(Refund.expires_at))
