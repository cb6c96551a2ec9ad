"""Invoice verbs and queries, shared by the HTTP handlers and the jobs."""
from __future__ import annotations

import datetime as dt

from core import ids, money
from core.errors import BadRequest, Conflict, DomainError, Forbidden, NotFound, validation_error
from infra import lookups
from infra.locks import lock_row, write_transaction
from infra.pagination import Page, PageRequest, paginate
from models.integrations import Integration
from models.invoices import Invoice
from models.stores import ApiKey, Store
from providers.base import PENDING_DEPOSIT, ProviderError
from services import integrations
from services.engine import deposits, invoice_states, payments
from services.webhooks import outbox
from services.webhooks.webhook_urls import check_target_url

DEFAULT_LIST_WINDOW = dt.timedelta(days=90)
_DATE_FILTERS = ("created_after", "created_before", "paid_after", "paid_before")


def create_invoice(store: Store, key: ApiKey, data: dict, *, now: dt.datetime, ttl_seconds: int,
                   supported_currencies: tuple[str, ...], allow_private_callbacks: bool = False) -> Invoice:
    """Validate what only the domain can (store, key kind, currency) and persist a `pending` invoice."""
    if data.get("store_id") is not None and data["store_id"] != str(store.id):
        raise Forbidden("store_mismatch", "store_id does not match the API key's store.", param="store_id")
    if data["currency"] not in supported_currencies:
        raise validation_error("currency", f"must be one of {', '.join(supported_currencies)}")
    money.check_fiat_places(data.get("order_amount"), data.get("order_currency") or data["currency"], "order_amount")
    if key.kind == "integration":
        if not data.get("external_order_id"):
            raise validation_error("external_order_id", "is required for integration keys")
        if data.get("callback_url"):
            raise Forbidden("integration_key_forbidden",
                            "callback_url is for standard keys; integrations receive webhooks.",
                              param="callback_url")
    if data.get("callback_url"):
        _check_callback_url(data["callback_url"], allow_private=allow_private_callbacks)
    if not store.payout_wallet:
        raise BadRequest("payout_wallet_not_configured",
                         "The store has no payout wallet; set one before creating invoices.")
    fields = dict(
        id=ids.new_uuid(),
        public_id=ids.new_public_id("inv_"),
        store=store.id,
        amount=data["amount"],
        currency=data["currency"],
        order_amount=data.get("order_amount") or data["amount"],
        order_currency=data.get("order_currency") or data["currency"],
        output_asset=store.output_asset,
        external_order_id=data.get("external_order_id"),
        customer_id=data.get("customer_id"),
        customer_email=data.get("customer_email"),
        return_url=data.get("return_url"),
        callback_url=data.get("callback_url"),
        metadata=data.get("metadata"),
        expires_at=now + dt.timedelta(seconds=ttl_seconds),
    )
    integration = integrations.for_key(key) if key.kind == "integration" else None
    if integration is not None:
        return _create_for_installation(integration, fields, now=now)
    return invoice_states.create(now=now, **fields)


def _check_callback_url(url: str, *, allow_private: bool) -> None:
    """The webhook address rules, at create: a refused `callback_url` is this route's 400."""
    try:
        check_target_url(url, allow_private=allow_private, param="callback_url")
    except DomainError as refused:
        raise BadRequest("validation_error", refused.message, param="callback_url") from None


ORDER_BLOCKING = invoice_states.OPEN + ("paid",)


def _create_for_installation(integration: Integration, fields: dict, *, now: dt.datetime) -> Invoice:
    """An installation's invoice, linked to it; one open or paid invoice per order of the shop.

    The check and the insert run under a lock on the installation row (PostgreSQL: FOR UPDATE),
    so two concurrent creates for one order cannot both pass. A unique index could not express
    the rule: an expired invoice paid late must not collide with its successor."""
    with write_transaction():
        lock_row(Integration, integration.id)
        existing = (Invoice.select(Invoice.public_id, Invoice.status)
                    .where((Invoice.integration_id == integration.id)
                           & (Invoice.external_order_id == fields["external_order_id"])
                           & Invoice.status.in_(ORDER_BLOCKING))
                    .order_by(Invoice.created_at.desc()).first())
        if existing is not None:
            raise Conflict("EXTERNAL_ORDER_INTEGRATION_CONFLICT",
                           f"Order {fields['external_order_id']!r} already has invoice {existing.public_id} "
                           f"({existing.status}).",
                              details={"invoice_id": existing.public_id, "status": existing.status,
                           "external_order_id": fields["external_order_id"]})
        return invoice_states.create(now=now, integration_id=integration.id, **fields)


def get_for_store(store: Store, public_id: str) -> Invoice:
    return lookups.one_in_store(Invoice, store, public_id, prefix="inv_", code="invoice_not_found", noun="invoice")


def get_public(public_id: str) -> Invoice:
    """Any store's invoice by its unguessable id: the buyer's routes (docs/checkout.md)."""
    invoice = Invoice.get_or_none(Invoice.public_id == public_id) if ids.is_public_id(public_id, "inv_") else None
    if invoice is None:
        raise NotFound("invoice_not_found", f"No invoice {public_id!r}.")
    return invoice


def give_customer_email(invoice: Invoice, address: str | None) -> None:
    """The buyer's own address for the receipt (checkout and payment-link pages): kept only while the
    invoice is open and nobody gave one, so it never replaces the merchant's."""
    if address:
        Invoice.update(customer_email=address).where(
            (Invoice.id == invoice.id) & Invoice.customer_email.is_null()
            & Invoice.status.in_(invoice_states.OPEN)).execute()


def list_for_store(store: Store, filters: dict, page: PageRequest, *, now: dt.datetime) -> Page:
    if not any(filters.get(name) for name in _DATE_FILTERS):
        filters = {**filters, "created_after": now - DEFAULT_LIST_WINDOW}
    query = filtered(Invoice.select(), store, filters)
    return paginate(query, Invoice, page, prefix="inv_", scope=Invoice.store == store.id)


def filtered(query, store: Store, filters: dict):
    """`query` narrowed to the store and the list filters (shared by the list and the export)."""
    query = lookups.narrowed(query.where(Invoice.store == store.id), filters, created_at=Invoice.created_at, equal={
        "status": Invoice.status, "external_order_id": Invoice.external_order_id,
        "customer_id": Invoice.customer_id, "payment_link_id": Invoice.payment_link_id})
    if filters.get("paid_after"):
        query = query.where(Invoice.paid_at >= filters["paid_after"])
    if filters.get("paid_before"):
        query = query.where(Invoice.paid_at < filters["paid_before"])
    return query


def ensure_key_may_cancel(key: ApiKey) -> None:
    """Integration keys never cancel: the storefront must not undo what the buyer sees."""
    if key.kind == "integration":
        raise Forbidden("integration_key_forbidden", "Integration keys cannot cancel invoices.")


def cancel(invoice: Invoice, key: ApiKey, *, now: dt.datetime, provider=None, timeout_seconds: int = 3) -> Invoice:
    """Cancel an open invoice; one with a deposit address only once the provider rules a deposit out
    (docs/payment-engine.md#money-is-never-left-unrecorded), as the expiry sweep does. It stays watched afterwards."""
    ensure_key_may_cancel(key)
    if invoice.deposit_address and invoice_states.can_cancel(invoice):
        _rule_out_deposit(invoice, provider, now=now, timeout_seconds=timeout_seconds)
    moved = invoice_states.move(invoice.id, "cancel", now=now, guard=Invoice.deposit_seen_at.is_null())
    if moved is None:
        raise BadRequest("invoice_not_cancellable",
                         f"Invoice {invoice.public_id} is {invoice.status}; only open invoices with no "
                         "deposit seen can be cancelled.")
    return moved


def _rule_out_deposit(invoice: Invoice, provider, *, now: dt.datetime, timeout_seconds: int) -> None:
    try:
        status = deposits.ask_deposit_status(provider, invoice, timeout_seconds=timeout_seconds)
    except ProviderError as error:
        raise deposits.cannot_rule_out(invoice, error, money="deposit") from None
    if status.status != PENDING_DEPOSIT:
        payments.apply_deposit_status(invoice, status, now=now)     # record what the provider knows
        raise Conflict("invoice_not_cancellable",
                       f"Invoice {invoice.public_id} has a deposit the provider already knows; it can no "
                       "longer be cancelled.")
