"""The expiry sweep (docs/payment-engine.md): open invoices past `expires_at` with no deposit seen.

It walks the due invoices in (expires_at, id) order through the (status, expires_at) index, in
batches, so its cost follows the number of invoices due, not the size of the table. Expiry never
races a payment: an invoice with a deposit address is first checked with the provider, and a
known deposit is applied instead (which keeps the invoice from expiring).
"""
from __future__ import annotations

import datetime as dt
import logging
import time

from models.invoices import Invoice
from providers import base
from providers.base import ProviderError
from services.engine import deposits, invoice_states, payments

log = logging.getLogger("tender.expiry")
PROVIDER_FAILURES_TO_PAUSE = 3   # in a row: the provider is down; stop asking it in this sweep


def expire_due(provider, *, now: dt.datetime, batch_size: int = 500, timeout_seconds: float = 3,
               time_budget: float = 90.0) -> int:
    """Expire every due invoice; returns how many moved to `expired`.

    Each provider call is bounded by `timeout_seconds`; an invoice whose deposit could not be ruled
    out stays open and is asked about again by the next sweep. After a few failures in a row the
    provider is taken as down: the sweep still walks the rest, expiring every invoice that has no
    deposit address, so an outage never stops other invoices from expiring."""
    expired, after, started = 0, None, time.monotonic()
    sweep = _Sweep(provider, timeout_seconds)
    while time.monotonic() - started < time_budget:
        query = (Invoice.select().where(Invoice.status.in_(invoice_states.OPEN) & (Invoice.expires_at <= now)
                                        & Invoice.deposit_seen_at.is_null())
                 .order_by(Invoice.expires_at, Invoice.id).limit(batch_size))
        if after is not None:
            query = query.where((Invoice.expires_at > after[0])
                                | ((Invoice.expires_at == after[0]) & (Invoice.id > after[1])))
        rows = list(query)
        for invoice in rows:
            expired += sweep.expire_one(invoice, now=now)
        if len(rows) < batch_size:
            break
        after = (rows[-1].expires_at, rows[-1].id)
    if sweep.postponed:
        log.warning("expiry postponed for %d invoice(s): the provider could not rule out a deposit",
                    sweep.postponed)
    return expired


class _Sweep:
    """One expiry sweep's view of the provider: asked with a deadline, skipped once it is down."""

    def __init__(self, provider, timeout_seconds: float):
        self.provider, self.timeout_seconds = provider, timeout_seconds
        self.failures_in_a_row = self.postponed = 0

    def expire_one(self, invoice: Invoice, *, now: dt.datetime) -> int:
        if invoice.deposit_address:
            if self.failures_in_a_row >= PROVIDER_FAILURES_TO_PAUSE:
                self.postponed += 1
                return 0
            try:
                status = deposits.ask_deposit_status(self.provider, invoice, timeout_seconds=self.timeout_seconds)
            except ProviderError as error:
                self.failures_in_a_row += 1
                self.postponed += 1
                log.warning("expiry of %s postponed, provider unavailable: %s", invoice.public_id, error)
                return 0
            self.failures_in_a_row = 0
            if status.status != base.PENDING_DEPOSIT:
                payments.apply_deposit_status(invoice, status, now=now)   # a deposit keeps it open
                return 0
        # The polling schedule is left as it is: a deposit made in time but seen late still counts.
        return 1 if invoice_states.move(invoice.id, "expire", now=now) is not None else 0


def expire_one(invoice: Invoice, provider, *, now: dt.datetime, timeout_seconds: float = 3) -> int:
    return _Sweep(provider, timeout_seconds).expire_one(invoice, now=now)
