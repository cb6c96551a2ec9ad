"""What the buyer's pages tell about the money (docs/checkout.md): how much reached the deposit
address, what an underpaid invoice still needs, and where a refund went.

Read from the transactions the payment engine records, so the buyer reads the same figures as the
merchant, in the asset the buyer sent.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from models.invoices import Invoice
from models.transactions import Transaction


@dataclass(frozen=True)
class Refund:
    amount: Decimal
    asset: str
    address: str | None
    transaction_hash: str | None      # None until the provider names the refund's transaction


def with_payment_details(invoice: Invoice) -> Invoice:
    """The invoice with `amount_received`, `amount_remaining` and `refund` set (None when unknown)."""
    rows = [] if not invoice.deposit_address else list(
        Transaction.select(Transaction.type, Transaction.amount, Transaction.token, Transaction.to_wallet,
                           Transaction.transaction_hash, Transaction.verified)
        .where((Transaction.invoice == invoice.id) & Transaction.type.in_(("payment_origin", "refund")))
        .order_by(Transaction.created_at))
    deposits = [row for row in rows if row.type == "payment_origin"]
    refunds = [row for row in rows if row.type == "refund"]
    received = sum((row.amount for row in deposits), Decimal(0)) if deposits else None
    invoice.amount_received = received
    invoice.amount_remaining = (max(invoice.amount_due - received, Decimal(0))
                                if invoice.status == "underpaid" and received is not None and invoice.amount_due
                                else None)
    # An unverified refund row is keyed by the provider's reference, not by a chain transaction.
    invoice.refund = Refund(amount=sum((row.amount for row in refunds), Decimal(0)), asset=refunds[0].token,
                            address=refunds[0].to_wallet or invoice.refund_to,
                            transaction_hash=refunds[0].transaction_hash if refunds[0].verified else None,
                            ) if refunds else None
    return invoice
