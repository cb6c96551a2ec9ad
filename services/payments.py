"""What a provider status means for an invoice (docs/payment-engine.md) and the transactions it records (docs/api.md#transactions).

`apply_deposit_status` is the one place that turns a 1Click status into moves. It is idempotent:
each move is a compare-and-set, each transaction is unique per (invoice, type, hash), and the
whole application of one status is one database transaction, so a repeated, reordered or
concurrent poll changes nothing twice, and a worker killed half-way leaves nothing half-done.

Units: `paid_amount`, `received_amount` and `difference_amount` are in the invoice currency (a
USD stablecoin output is taken at par), rounded to cents; transactions carry asset units.
"""
from __future__ import annotations

import datetime as dt
import logging
from decimal import ROUND_HALF_UP, Decimal

import peewee as pw

from models.base import db
from models.invoices import Invoice
from models.stores import Store
from models.transactions import Transaction
from providers import base
from providers.base import DepositStatus
from services import ids, invoice_states
from services.quotes import network_of

log = logging.getLogger("tender.payments")
_CENT = Decimal("0.01")
DEPOSIT_SEEN = (base.KNOWN_DEPOSIT_TX, base.PROCESSING, base.SUCCESS, base.INCOMPLETE_DEPOSIT,
                base.REFUNDED, base.FAILED)
REVIEW_AFTER_DEADLINE = dt.timedelta(hours=1)


def _cents(value: Decimal) -> Decimal:
    return value.quantize(_CENT, rounding=ROUND_HALF_UP)


def deposit_value(invoice: Invoice, status: DepositStatus) -> Decimal | None:
    """What the buyer paid, in the invoice currency: the deposit net of what the provider refunded
    (EXACT_OUTPUT returns the unused slippage buffer); the provider's USD values, else pro rata."""
    if status.amount_in_usd is not None and (status.refunded_amount_usd is not None or not status.refunded_amount):
        return _cents(status.amount_in_usd - (status.refunded_amount_usd or 0))
    if status.amount_in is not None and invoice.amount_due:
        net = status.amount_in - (status.refunded_amount or 0)
        return _cents(invoice.amount * net / invoice.amount_due)
    return None


def delivered_value(status: DepositStatus) -> Decimal | None:
    if status.amount_out_usd is not None:
        return _cents(status.amount_out_usd)
    return None if status.amount_out is None else _cents(status.amount_out)


def apply_deposit_status(invoice: Invoice, status: DepositStatus, *, now: dt.datetime) -> Invoice:
    """Apply one provider status to the invoice; returns the invoice as it is afterwards."""
    with db.atomic():
        Invoice.update(provider_status=status.status,
                       provider_ref=pw.fn.COALESCE(Invoice.provider_ref, status.correlation_id)).where(
            Invoice.id == invoice.id).execute()
        if status.status in DEPOSIT_SEEN:
            invoice_states.note_deposit(invoice.id, now=now)
            _record_origin(invoice, status, now=now)
        handler = _HANDLERS.get(status.status)
        if handler is not None:
            handler(invoice, status, now)
        return Invoice.get_by_id(invoice.id)


def deposit_hash(invoice: Invoice, status: DepositStatus) -> str | None:
    """The buyer's deposit: the first origin-chain hash Tender recorded for the invoice (seen at
    KNOWN_DEPOSIT_TX); later hashes are refunds or further deposits (docs/payment-engine.md)."""
    recorded = (Transaction.select(Transaction.transaction_hash)
                .where((Transaction.invoice == invoice.id) & (Transaction.type == "payment_origin"))
                .order_by(Transaction.created_at, Transaction.id).first())
    if recorded is not None:
        return recorded.transaction_hash
    if status.deposit_tx_hash or not status.origin_tx_hashes:
        return status.deposit_tx_hash
    return status.origin_tx_hashes[0]    # first sight already lists several: the best we have


def _confirm_paid(invoice: Invoice, status: DepositStatus, now: dt.datetime) -> None:
    origin_hash = deposit_hash(invoice, status)
    invoice_states.move(invoice.id, "deposit_confirmed", now=now, paid_at=now,
                        paid_amount=deposit_value(invoice, status) or invoice.amount,
                        swap_status="processing", transaction_hash=origin_hash)


def _on_success(invoice: Invoice, status: DepositStatus, now: dt.datetime) -> None:
    _confirm_paid(invoice, status, now)          # SUCCESS seen first: paid, then settled
    current = Invoice.get_by_id(invoice.id)
    if current.status != "paid" or current.swap_status != "processing":
        return
    received = delivered_value(status)
    payout_hash = status.destination_tx_hashes[0] if status.destination_tx_hashes else None
    if received is None or received < current.amount or payout_hash is None:
        reason = "no_payout_hash" if payout_hash is None else "short_delivery"
        if current.review_reason != reason:
            log.warning("settlement held for review: invoice=%s reason=%s delivered=%s",
                        current.public_id, reason, received)
            Invoice.update(review_reason=reason).where(Invoice.id == invoice.id).execute()
        return
    store = Store.get_by_id(current.store_id)
    _record(current, "settlement", payout_hash, now=now, network=network_of(current.output_asset),
            token=current.output_asset, amount=status.amount_out, from_wallet=None,
            to_wallet=store.payout_wallet, status="confirmed")
    paid = current.paid_amount or current.amount
    invoice_states.move(invoice.id, "settle", now=now, received_amount=received,
                        difference_amount=received - paid, swap_status=None, settled_at=now,
                        review_reason=None)


def _on_incomplete(invoice: Invoice, status: DepositStatus, now: dt.datetime) -> None:
    invoice_states.move(invoice.id, "underpaid", now=now, paid_amount=deposit_value(invoice, status))


def _on_refunded(invoice: Invoice, status: DepositStatus, now: dt.datetime) -> None:
    current = Invoice.get_by_id(invoice.id)
    deposit = deposit_hash(current, status)
    listed = status.refund_tx_hashes or tuple(tx for tx in status.origin_tx_hashes if tx != deposit)
    refund_hash = listed[0] if listed else f"provider:{current.provider_ref}"
    amount = status.refunded_amount if status.refunded_amount is not None else status.amount_in
    if current.status in ("awaiting_payment", "underpaid", "expired") or (
            current.status == "paid" and current.swap_status == "processing"):
        _record(current, "refund", refund_hash, now=now, network=network_of(current.origin_asset or ""),
                token=current.origin_asset or "", amount=amount or Decimal(0),
                from_wallet=current.deposit_address, to_wallet=current.refund_to, status="confirmed",
                verified=bool(listed))
    if current.status == "expired":
        invoice_states.move(invoice.id, "late_refund", now=now)
    else:
        invoice_states.move(invoice.id, "refund", now=now, swap_status=None)


def _on_failed(invoice: Invoice, status: DepositStatus, now: dt.datetime) -> None:
    invoice_states.move(invoice.id, "fail", now=now, swap_status=None)


_HANDLERS = {
    base.PROCESSING: _confirm_paid,
    base.SUCCESS: _on_success,
    base.INCOMPLETE_DEPOSIT: _on_incomplete,
    base.REFUNDED: _on_refunded,
    base.FAILED: _on_failed,
}


def _record_origin(invoice: Invoice, status: DepositStatus, *, now: dt.datetime) -> None:
    if not status.origin_tx_hashes or status.amount_in is None:
        return
    confirmed = status.status != base.KNOWN_DEPOSIT_TX
    current = Invoice.get_by_id(invoice.id)
    _record(current, "payment_origin", deposit_hash(current, status), now=now,
            network=network_of(current.origin_asset or ""), token=current.origin_asset or "",
            amount=status.amount_in, from_wallet=current.refund_to, to_wallet=current.deposit_address,
            status="confirmed" if confirmed else "pending")


def _record(invoice: Invoice, type_: str, transaction_hash: str, *, now: dt.datetime, status: str,
            verified: bool | None = None, **fields) -> Transaction:
    """Insert the movement once; a later poll may only promote it from pending to confirmed."""
    key = ((Transaction.invoice == invoice.id) & (Transaction.type == type_)
           & (Transaction.transaction_hash == transaction_hash))
    confirmed = status == "confirmed"
    verified = confirmed if verified is None else verified
    existing = Transaction.get_or_none(key)
    if existing is None:
        try:
            with db.atomic():
                return Transaction.create(
                    id=ids.new_uuid(), public_id=ids.new_public_id("txn_"), store=invoice.store_id,
                    invoice=invoice.id, type=type_, transaction_hash=transaction_hash, status=status,
                    verified=verified, confirmed_at=now if confirmed else None, created_at=now,
                    updated_at=now, **fields)
        except pw.IntegrityError:
            existing = Transaction.get(key)       # a concurrent poll recorded it first
    if confirmed and existing.status == "pending":
        Transaction.update(status="confirmed", verified=verified, confirmed_at=now, updated_at=now).where(
            key & (Transaction.status == "pending")).execute()
    return Transaction.get(key)


def stuck(*, now: dt.datetime) -> list[Invoice]:
    """Invoices still converting an hour after their deadline, or whose settlement is held."""
    return list(Invoice.select().where(
        (Invoice.status == "paid") & (Invoice.swap_status == "processing")
        & ((Invoice.expires_at < now - REVIEW_AFTER_DEADLINE) | Invoice.review_reason.is_null(False)))
        .order_by(Invoice.expires_at))
