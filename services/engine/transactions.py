"""Transactions: the one way a row is inserted, and the queries (docs/api.md#transactions)."""
from __future__ import annotations

import datetime as dt

from core import ids
from core.errors import NotFound
from infra import lookups
from infra.pagination import Page, PageRequest, paginate
import peewee as pw

from models.base import db
from models.invoices import Invoice
from models.payment_links import PaymentLink
from models.refunds import Refund
from models.stores import Store
from models.transactions import Transaction
from services import settlement_days


def insert(invoice: Invoice, *, refund_amount=None, **fields) -> Transaction:
    """Insert a transaction of `invoice` (as the database holds it now) and, in the same database
    transaction, add it to the settlement statement's roll-up: every transaction row is written
    here (tests/test_architecture.py), so none is left out of the statement. `refund_amount`: the
    merchant refund's amount, for the delivery of one (the roll-up counts it)."""
    transaction = Transaction.create(invoice=invoice.id, **fields)
    settlement_days.transaction_recorded(transaction, invoice, refund_amount=refund_amount)
    return transaction


_UNREAD = object()


def record_movement(invoice: Invoice, type_: str, transaction_hash: str, *, now: dt.datetime, status: str,
                    verified: bool | None = None, known=_UNREAD, refund_amount=None, **fields) -> Transaction:
    """Insert the movement once; a later poll may only promote it from pending to confirmed.
    `known`: the movement as the caller already read it (None: not recorded yet), to save a read."""
    key = ((Transaction.invoice == invoice.id) & (Transaction.type == type_)
           & (Transaction.transaction_hash == transaction_hash))
    confirmed = status == "confirmed"
    verified = confirmed if verified is None else verified
    existing = Transaction.get_or_none(key) if known is _UNREAD else known
    if existing is None:
        try:
            with db.atomic():
                return insert(invoice, refund_amount=refund_amount, id=ids.new_uuid(),
                              public_id=ids.new_public_id("txn_"), store=invoice.store_id, type=type_,
                              transaction_hash=transaction_hash, status=status, verified=verified,
                              confirmed_at=now if confirmed else None, created_at=now, updated_at=now, **fields)
        except pw.IntegrityError:
            existing = Transaction.get(key)       # a concurrent poll recorded it first
    if confirmed and existing.status == "pending":
        Transaction.update(status="confirmed", verified=verified, confirmed_at=now, updated_at=now).where(
            key & (Transaction.status == "pending")).execute()
        existing.status, existing.verified, existing.confirmed_at = "confirmed", verified, now
    return existing


def with_invoice():
    """Transactions with what their JSON names: the invoice's id and, for a merchant refund's
    delivery, the refund's id. Joined once, never read per row."""
    return (Transaction.select(Transaction, Invoice.public_id, Refund.public_id).join(Invoice)
            .switch(Transaction).join(Refund, pw.JOIN.LEFT_OUTER, on=(Transaction.refund == Refund.id)))


def get_for_store(store: Store, public_id: str) -> Transaction:
    return lookups.one_in_store(Transaction, store, public_id, prefix="txn_", code="transaction_not_found",
                                noun="transaction", query=with_invoice())


def get_by_hash(store: Store, transaction_hash: str) -> Transaction:
    transaction = None
    if 0 < len(transaction_hash) <= 256:
        transaction = (with_invoice()
                       .where((Transaction.transaction_hash == transaction_hash) & (Transaction.store == store.id))
                       .order_by(Transaction.created_at.desc()).first())
    if transaction is None:
        raise NotFound("transaction_not_found", "No transaction with that hash in this store.")
    return transaction


def list_for_store(store: Store, filters: dict, page: PageRequest) -> Page:
    query = filtered(with_invoice(), store, filters)
    return paginate(query, Transaction, page, prefix="txn_", scope=Transaction.store == store.id)


def filtered(query, store: Store, filters: dict):
    """`query` (joined with Invoice) narrowed to the store and the list filters; the export adds a
    `created_after`/`created_before` range."""
    return lookups.narrowed(query.where(Transaction.store == store.id), filters, created_at=Transaction.created_at, equal={
        "type": Transaction.type, "status": Transaction.status, "invoice_id": Invoice.public_id,
        "payment_link_id": Invoice.payment_link_id, "customer_id": Invoice.customer_id})


def list_for_invoice(invoice: Invoice) -> list[Transaction]:
    """All of an invoice's movements, oldest first (payment, then settlement or refund)."""
    return list(with_invoice().where(Transaction.invoice == invoice.id)
                .order_by(Transaction.created_at.asc(), Transaction.id.asc()))


def list_for_payment_link(link: PaymentLink, page: PageRequest) -> Page:
    """The transactions of the invoices made from a payment link (its checkouts)."""
    scope = (Transaction.store == link.store_id) & (Invoice.payment_link_id == link.public_id)
    query = with_invoice().where(scope)
    cursor_scope = Transaction.store == link.store_id
    return paginate(query, Transaction, page, prefix="txn_", scope=cursor_scope)
