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
    """The invoice with `amount_received`, `amount_remaining`, `refunds` (what went back to the
    buyer, one sum per asset and address) and `refund` (the first of them, or None) set."""
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
    invoice.refunds = _by_asset_and_address(refunds, invoice.refund_to)
    invoice.refund = invoice.refunds[0] if invoice.refunds else None
    return invoice


def _by_asset_and_address(rows: list, refund_to: str | None) -> list[Refund]:
    """Refunds summed per asset and address, in the order they came: amounts of different assets
    never add up (a merchant may refund in another asset than the buyer paid with)."""
    groups: dict = {}
    for row in rows:
        groups.setdefault((row.token, row.to_wallet or refund_to), []).append(row)
    # An unverified refund row is keyed by the provider's reference, not by a chain transaction.
    return [Refund(amount=sum((row.amount for row in group), Decimal(0)), asset=asset, address=address,
                   transaction_hash=group[0].transaction_hash if group[0].verified else None)
            for (asset, address), group in groups.items()]
