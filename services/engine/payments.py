"""What a provider status means for an invoice (docs/payment-engine.md) and the transactions it records (docs/api.md#transactions).

`apply_deposit_status` is the one place that turns a 1Click status into moves. It is idempotent:
all the moves of one status are one compare-and-set of the invoice, each transaction is unique per
(invoice, type, hash), and the whole application of one status is one database transaction, so a
repeated, reordered or concurrent poll changes nothing twice, and a worker killed half-way leaves
nothing half-done.

Units: `paid_amount`, `received_amount` and `difference_amount` are in the invoice currency (the
output asset's units converted at the rate the commit fixed), rounded to its minor units;
transactions carry asset units.
"""
from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal
import logging

from core import money
from core.networks import network_of
from models.invoices import Invoice
from models.stores import Store
from models.transactions import Transaction
from providers import base
from providers.base import DepositStatus
from services.engine import exchange_rates, invoice_states, payout_terms
from services.engine.answers import apply_until_current
from services.engine.deposits import DEPOSIT_SEEN
from services.engine.transactions import record_movement

log = logging.getLogger("tender.payments")
REVIEW_AFTER_DEADLINE = dt.timedelta(hours=1)
# Kept as they are when a refund comes: the refund transaction is their record (docs/payment-engine.md).
# A refund of a deposit that reached an invoice closed unpaid keeps its status: the refund is the record.
REFUND_MOVE_WHEN_CLOSED = {"expired": "late_refund", "cancelled": "crossed_refund"}


def _in_currency(value: Decimal, invoice: Invoice) -> Decimal:
    """Rounded to the invoice currency's minor units (cents, whole yen)."""
    return value.quantize(money.minor_unit(invoice.currency), rounding=ROUND_HALF_UP)


def refunded_excess(status: DepositStatus) -> Decimal:
    """What the provider sent back of a deposit that still settled (an overpayment), origin units."""
    if status.status == base.SUCCESS and status.refunded_amount:
        return status.refunded_amount
    return Decimal(0)


def deposit_value(invoice: Invoice, status: DepositStatus) -> Decimal | None:
    """What the buyer paid, in the invoice currency, net of what the provider sent back of a deposit
    that still settled (an overpayment, or EXACT_OUTPUT's unused slippage buffer): the provider's USD
    values at the invoice's fixed rate (when it is paid out in dollars), else pro rata of the quote.
    None when neither can tell (never a guess)."""
    if status.amount_in is None:
        return None
    excess = refunded_excess(status)
    if not excess and invoice.amount_due and status.amount_in > invoice.amount_due \
            and status.status != base.SUCCESS:
        # Above what the quote asked for, before the provider has said what it sent back: the
        # excess is the buyer's (the quote delivers an exact output and refunds the rest), so the
        # invoice never shows more paid than due, then less once the refund is reported.
        excess = status.amount_in - invoice.amount_due
    net = status.amount_in - excess
    if status.amount_in_usd is not None and status.amount_in > 0 and _valued_in_dollars(invoice):
        if excess and status.refunded_amount_usd is not None:
            return _in_currency(_dollars_in_currency(status.amount_in_usd - status.refunded_amount_usd, invoice),
                                invoice)
        return _in_currency(_dollars_in_currency(status.amount_in_usd * net / status.amount_in, invoice), invoice)
    if invoice.amount_due:
        return _in_currency(invoice.amount * net / invoice.amount_due, invoice)
    return None


def _valued_in_dollars(invoice: Invoice) -> bool:
    """The provider's USD values can be read in the invoice currency: at par with a dollar, or
    through the invoice's dollar rate."""
    payout_currency = exchange_rates.payout_currency(invoice.output_asset)
    return payout_currency == "USD" and (invoice.currency == "USD" or invoice.exchange_rate is not None)


def _dollars_in_currency(dollars: Decimal, invoice: Invoice) -> Decimal:
    return dollars / invoice.exchange_rate if invoice.currency != "USD" else dollars


def committed_amount_out(invoice: Invoice) -> Decimal:
    """What the committed quote promised the merchant, in output-asset units: EXACT_OUTPUT of the
    payout less the operator's fee (services/engine/payout_terms.py)."""
    return payout_terms.promised_amount_out(invoice)


def apply_deposit_status(invoice: Invoice, status: DepositStatus, *, now: dt.datetime) -> Invoice:
    """Apply one provider status to the invoice as read; returns the invoice as it is afterwards.

    One database transaction: the transactions the answer records, then one compare-and-set of
    the invoice with its events (invoice_states.Answer). When another writer moved the invoice
    since it was read, the answer is applied again to the invoice as it is now."""
    return apply_until_current(lambda current: _apply(current, status, now=now), invoice, log=log, what="invoice")


class _Reading:
    """One provider answer being applied to an invoice, with the buyer's deposit as Tender recorded
    it: read once, when first needed (the hash the move names, the row the origin promotes)."""

    def __init__(self, invoice: Invoice, status: DepositStatus, now: dt.datetime):
        self.invoice, self.status, self.now = invoice, status, now
        self._origin: list = []

    def recorded_origin(self) -> Transaction | None:
        """The first `payment_origin` transaction of the invoice (seen at KNOWN_DEPOSIT_TX), or None."""
        if not self._origin:
            self._origin.append(Transaction.select()
                                .where((Transaction.invoice == self.invoice.id) & (Transaction.type == "payment_origin"))
                                .order_by(Transaction.created_at, Transaction.id).first())
        return self._origin[0]

    def deposit_hash(self) -> str | None:
        """The buyer's deposit: the first origin-chain hash Tender recorded for the invoice; later
        hashes are refunds or further deposits (docs/payment-engine.md)."""
        recorded = self.recorded_origin()
        if recorded is not None:
            return recorded.transaction_hash
        if self.status.deposit_tx_hash or not self.status.origin_tx_hashes:
            return self.status.deposit_tx_hash
        return self.status.origin_tx_hashes[0]    # first sight already lists several: the best we have

    def record_origin(self, current: Invoice) -> None:
        status = self.status
        if not status.origin_tx_hashes or status.amount_in is None:
            return
        confirmed = status.status != base.KNOWN_DEPOSIT_TX
        recorded = record_movement(
            current, "payment_origin", self.deposit_hash(), now=self.now, known=self.recorded_origin(),
            network=network_of(current.origin_asset or ""), token=current.origin_asset or "", amount=status.amount_in,
            from_wallet=current.refund_to, to_wallet=current.deposit_address,
            status="confirmed" if confirmed else "pending")
        self._origin[:] = [recorded]


def _apply(invoice: Invoice, status: DepositStatus, *, now: dt.datetime) -> Invoice:
    answer = invoice_states.Answer(invoice, now=now)
    if not answer.learn(status):
        return answer.write()
    reading = _Reading(invoice, status, now)
    if status.status in DEPOSIT_SEEN:
        # From now on the invoice neither expires nor can be cancelled: the buyer's money is in flight.
        if invoice.deposit_seen_at is None:
            answer.set(deposit_seen_at=now, updated_at=now)
        reading.record_origin(answer.row)
    handler = _HANDLERS.get(status.status)
    if handler is not None:
        handler(answer, reading)
    return answer.write()


def _confirm_paid(answer: invoice_states.Answer, reading: _Reading) -> None:
    current = answer.row
    if not invoice_states.allows("deposit_confirmed", current):
        return
    paid_amount = deposit_value(current, reading.status)
    if paid_amount is None:
        answer.hold("missing_amount", "no USD value and no committed quote to value the deposit")
        return
    answer.move("deposit_confirmed", paid_at=reading.now, paid_amount=paid_amount, swap_status="processing",
                transaction_hash=reading.deposit_hash())


def _on_success(answer: invoice_states.Answer, reading: _Reading) -> None:
    _confirm_paid(answer, reading)              # SUCCESS seen first: paid, then settled
    current, status, now = answer.row, reading.status, reading.now
    if current.status != "paid" or current.swap_status != "processing":
        return
    if refunded_excess(status):
        _record_refund(current, reading, suffix="excess")
        answer.set(paid_amount=deposit_value(current, status))
    payout_hash = status.destination_tx_hashes[0] if status.destination_tx_hashes else None
    covered = status.amount_out is not None and status.amount_out >= committed_amount_out(current)
    if not covered or payout_hash is None:
        answer.hold("no_payout_hash" if payout_hash is None else "short_delivery",
                    f"delivered={status.amount_out} promised={committed_amount_out(current)}")
        return
    store = Store.get_by_id(current.store_id)
    record_movement(current, "settlement", payout_hash, now=now, network=network_of(current.output_asset),
                    token=current.output_asset, amount=status.amount_out, from_wallet=None,
                    to_wallet=store.payout_wallet, status="confirmed")
    # Back in the invoice currency at the rate the commit fixed (at par when there is none).
    received = payout_terms.to_invoice_currency(status.amount_out, current.currency, current.exchange_rate)
    answer.move("settle", received_amount=received, difference_amount=received - current.paid_amount,
                swap_status=None, settled_at=now, review_reason=None)


def _on_incomplete(answer: invoice_states.Answer, reading: _Reading) -> None:
    answer.move("underpaid", paid_amount=deposit_value(answer.row, reading.status))


def _on_refunded(answer: invoice_states.Answer, reading: _Reading) -> None:
    current = answer.row
    refundable = current.status in invoice_states.WATCHED or (
        current.status == "paid" and current.swap_status == "processing")
    if not refundable:
        return
    recorded = _record_refund(current, reading)
    if current.status in REFUND_MOVE_WHEN_CLOSED:
        if recorded:                              # once: a repeated poll touches nothing
            answer.move(REFUND_MOVE_WHEN_CLOSED[current.status])
        return
    answer.move("refund", swap_status=None)


def _on_failed(answer: invoice_states.Answer, reading: _Reading) -> None:
    answer.move("fail", swap_status=None)


_HANDLERS = {
    base.PROCESSING: _confirm_paid,
    base.SUCCESS: _on_success,
    base.INCOMPLETE_DEPOSIT: _on_incomplete,
    base.REFUNDED: _on_refunded,
    base.FAILED: _on_failed,
}


def _record_refund(invoice: Invoice, reading: _Reading, *, suffix: str = "") -> bool:
    """Record what the provider sent back to the buyer; True when it was not recorded before."""
    status, deposit = reading.status, reading.deposit_hash()
    listed = status.refund_tx_hashes or tuple(tx for tx in status.origin_tx_hashes if tx != deposit)
    if listed:
        refund_hash = listed[0]
    else:   # no hash yet: one stable key per provider swap (and per kind of refund)
        refund_hash = f"provider:{invoice.provider_ref}" + (f":{suffix}" if suffix else "")
    amount = status.refunded_amount if status.refunded_amount is not None else status.amount_in
    key = ((Transaction.invoice == invoice.id) & (Transaction.type == "refund")
           & (Transaction.transaction_hash == refund_hash))
    if Transaction.select().where(key).exists():
        return False
    record_movement(invoice, "refund", refund_hash, now=reading.now, network=network_of(invoice.origin_asset or ""),
                    token=invoice.origin_asset or "", amount=amount or Decimal(0), from_wallet=invoice.deposit_address,
                    to_wallet=invoice.refund_to, status="confirmed", verified=bool(listed), known=None)
    return True


def stuck(*, now: dt.datetime) -> list[Invoice]:
    """Invoices held for review (whatever their state), and paid ones still converting an hour
    after their deadline."""
    late = ((Invoice.status == "paid") & (Invoice.swap_status == "processing")
            & (Invoice.expires_at < now - REVIEW_AFTER_DEADLINE))
    return list(Invoice.select().where(late | Invoice.review_reason.is_null(False)).order_by(Invoice.expires_at))
