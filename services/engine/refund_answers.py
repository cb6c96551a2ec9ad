"""What a provider status means for a merchant refund (docs/refunds.md): the refund poller's, the
cancel's and the expiry sweep's one way to apply an answer.

As for an invoice (services/engine/payments.py), an answer is decided on the refund as it was read
(refund_states.Answer), then written as one compare-and-set with its event; a delivery's `refund`
transaction and the invoice's `refunded_amount` are written after it, in the same database
transaction. A repeated, reordered or concurrent poll changes nothing twice.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
import logging

from core.networks import network_of
from infra.locks import lock_row
from models.invoices import Invoice
from models.refunds import Refund
from providers import base
from providers.base import DepositStatus
from services.engine import invoice_states, refund_states
from services.engine.answers import apply_until_current
from services.engine.deposits import DEPOSIT_SEEN
from services.engine.refund_states import Answer
from services.engine.transactions import record_movement

log = logging.getLogger("tender.refunds")


def apply_funding_status(refund: Refund, status: DepositStatus, *, now: dt.datetime) -> Refund:
    """Apply one provider status to the refund as read; returns the refund as it is afterwards.
    When another writer changed the refund since it was read, the answer is applied again to the
    refund as it is now (up to three times; after that the next poll asks again)."""
    return apply_until_current(lambda current: _apply(current, status, now=now), refund, log=log, what="refund")


def _apply(refund: Refund, status: DepositStatus, *, now: dt.datetime) -> Refund:
    answer = Answer(refund, now=now)
    if not answer.learn(status):
        return answer.write()
    if status.status in DEPOSIT_SEEN:
        _note_funding(answer, status)
    handler = _HANDLERS.get(status.status)
    delivery = handler(answer, status) if handler is not None else None
    # The invoice's row lock before the refund's write: that write's event row takes a key share
    # on the invoice, and upgrading it deadlocked with another delivery on the same invoice.
    invoice = lock_row(Invoice, refund.invoice_id) if delivery is not None else None
    written = answer.write()
    if delivery is not None:
        _record_delivery(written, invoice, *delivery, now=now)
    return written


def _note_funding(answer: Answer, status: DepositStatus) -> None:
    """Record what reached the address (short, exact or too large: the provider's figure), and move
    an unfunded refund, or one whose funding crossed its cancel, to processing."""
    seen = {}
    if answer.row.deposit_seen_at is None:
        seen["deposit_seen_at"] = answer.now
    if status.amount_in is not None and status.amount_in != answer.row.funded_amount:
        seen["funded_amount"] = status.amount_in
    funding_hash = status.deposit_tx_hash or (status.origin_tx_hashes[0] if status.origin_tx_hashes else None)
    if answer.row.funding_tx_hash is None and funding_hash:
        seen["funding_tx_hash"] = funding_hash
    if seen:                                  # something new about the funding: the refund changed
        answer.set(updated_at=answer.now, **seen)
    answer.move("funding_seen")


def _returned(current: Refund, status: DepositStatus) -> dict:
    """What the provider sent back to the payout wallet (the whole funding, or an excess), if anything."""
    returned = status.refunded_amount if status.refunded_amount else None
    if status.status == base.REFUNDED and returned is None:
        returned = status.amount_in
    if returned is None:
        return {}
    listed = status.refund_tx_hashes or tuple(tx for tx in status.origin_tx_hashes if tx != current.funding_tx_hash)
    return {"returned_amount": returned, "return_tx_hash": listed[0] if listed else None}


def _on_success(answer: Answer, status: DepositStatus):
    """Delivered: the refund succeeds whatever its state (the books count what reached the buyer);
    returns the delivery (hash, amount) to record. Delivered after its funding window closed (its
    amount was freed, another refund may have taken it): held for an operator to look at."""
    current, now = answer.row, answer.now
    delivered_hash = status.destination_tx_hashes[0] if status.destination_tx_hashes else None
    if not refund_states.allows("succeed", current):
        return None
    if status.amount_out is None or delivered_hash is None:
        answer.hold("no_payout_hash", f"delivered={status.amount_out}")
        return None
    freed = current.funding_closed_at is not None
    previous = current.status
    answer.move("succeed", delivered_amount=status.amount_out, transaction_hash=delivered_hash, completed_at=now,
                review_reason=None, **_returned(current, status))
    if freed:
        answer.hold("delivered_after_close", f"{previous} refund delivered {status.amount_out}")
    return delivered_hash, status.amount_out


def _on_returned(answer: Answer, status: DepositStatus):
    """REFUNDED: the provider sent the funding back to the payout wallet (a failed refund swap,
    funding that stayed short past its deadline, or funding that came after it)."""
    current = answer.row
    returned = _returned(current, status)
    if not answer.move("fail", failure_reason="funding_returned", completed_at=answer.now, **returned):
        if returned and current.returned_amount is None:
            answer.set(updated_at=answer.now, **returned)
    return None


def _on_failed(answer: Answer, status: DepositStatus):
    answer.move("fail", failure_reason="provider_failed", completed_at=answer.now)
    return None


_HANDLERS = {base.SUCCESS: _on_success, base.REFUNDED: _on_returned, base.FAILED: _on_failed}


def _record_delivery(refund: Refund, invoice: Invoice, delivered_hash: str, amount: Decimal, *,
                     now: dt.datetime) -> None:
    """The `refund` transaction (money returned to the buyer, on the invoice, linked to the refund),
    and the refund added to its invoice's `refunded_amount`; refunded in full, the invoice moves to
    `refunded` (`invoice.refunded`). Under the invoice's row lock, in the answer's transaction."""
    record_movement(invoice, "refund", delivered_hash, now=now, network=network_of(refund.asset), token=refund.asset,
                    amount=amount, from_wallet=None, to_wallet=refund.refund_to, status="confirmed",
                    refund=refund.id, refund_amount=refund.amount)
    total = (invoice.refunded_amount or Decimal(0)) + refund.amount
    if invoice.received_amount is not None and total >= invoice.received_amount:
        if invoice_states.move(invoice.id, "refund_in_full", now=now, refunded_amount=total) is not None:
            return
    Invoice.update(refunded_amount=total, updated_at=now).where(Invoice.id == invoice.id).execute()
