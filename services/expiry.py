"""The expiry sweep (docs/payment-engine.md): open invoices past `expires_at` with no deposit seen.

It walks the due invoices in (expires_at, id) order through the (status, expires_at) index, in
batches, so its cost follows the number of invoices due, not the size of the table. Expiry never
races a payment: an invoice with a deposit address is first checked with the provider, and a
known deposit is applied instead (which keeps the invoice from expiring).
"""
from __future__ import annotations

import datetime as dt
import logging

from models.invoices import Invoice
from providers import base
from providers.base import ProviderError
from services import invoice_states, payments, quotes

log = logging.getLogger("tender.expiry")


def expire_due(provider, *, now: dt.datetime, batch_size: int = 500) -> int:
    """Expire every due invoice; returns how many moved to `expired`."""
    expired, after = 0, None
    while True:
        query = (Invoice.select().where(Invoice.status.in_(invoice_states.OPEN) & (Invoice.expires_at <= now)
                                        & Invoice.deposit_seen_at.is_null())
                 .order_by(Invoice.expires_at, Invoice.id).limit(batch_size))
        if after is not None:
            query = query.where((Invoice.expires_at > after[0])
                                | ((Invoice.expires_at == after[0]) & (Invoice.id > after[1])))
        rows = list(query)
        for invoice in rows:
            expired += expire_one(invoice, provider, now=now)
        if len(rows) < batch_size:
            return expired
        after = (rows[-1].expires_at, rows[-1].id)


def expire_one(invoice: Invoice, provider, *, now: dt.datetime) -> int:
    if invoice.deposit_address:
        try:
            status = quotes.deposit_status(provider, invoice)
        except ProviderError as error:
            log.warning("expiry of %s postponed, provider unavailable: %s", invoice.public_id, error)
            return 0
        if status.status != base.PENDING_DEPOSIT:
            payments.apply_deposit_status(invoice, status, now=now)   # a deposit keeps it open
            return 0
    # The polling schedule is left as it is: a deposit made in time but seen late still counts.
    return 1 if invoice_states.move(invoice.id, "expire", now=now) is not None else 0
