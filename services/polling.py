"""Asking the provider about deposits: which invoices are due, how often, and one poll.

Two pollers share this code (docs/payment-engine.md): `chain` follows invoices until the deposit
is confirmed (or refunded, failed, or the watch window closes); `settlement` follows paid
invoices whose conversion is still running, until `SUCCESS` settles them. Each claims its due
invoices in batches (services/claims.py) and polls them concurrently inside one job.
"""
from __future__ import annotations

import datetime as dt
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from models.base import db
from models.invoices import Invoice
from providers import base
from providers.base import ProviderError, ProviderRejected
from services import claims, payments, quotes

log = logging.getLogger("tender.polling")
LEASE_SECONDS = 60   # default lease: longer than one poll can take (provider timeout x retries)
WATCH_AFTER_DEADLINE = dt.timedelta(hours=24)   # docs/payment-engine.md: watch for late deposits this long
MAX_INTERVAL_SECONDS = 1800
TICK_SLACK = 0.2     # a tick also takes invoices due within this fraction of an interval

PHASES = {
    "chain": lambda: Invoice.status.in_(("awaiting_payment", "underpaid", "expired")),
    "settlement": lambda: (Invoice.status == "paid") & (Invoice.swap_status == "processing"),
}


def due(phase: str, now: dt.datetime):
    return PHASES[phase]() & Invoice.next_poll_at.is_null(False) & (Invoice.next_poll_at <= now)


def next_poll_at(invoice: Invoice, *, now: dt.datetime, base_seconds: int) -> dt.datetime | None:
    """When to ask again: soon while money moves, then backing off as an unpaid invoice ages."""
    if invoice.status in ("refunded", "failed", "cancelled"):
        return None
    if invoice.status == "paid" and invoice.swap_status is None:
        return None                                       # settled: nothing left to learn
    if invoice.deposit_seen_at is None and now > invoice.expires_at + WATCH_AFTER_DEADLINE:
        return None                                       # no deposit ever came
    if invoice.deposit_seen_at is not None:
        factor = 1
    elif invoice.status == "expired":
        factor = 12                                       # only a late deposit can still come
    else:
        age = now - (invoice.quoted_at or invoice.created_at)
        factor = 1 if age < dt.timedelta(minutes=10) else 3 if age < dt.timedelta(hours=1) else 12
    return now + dt.timedelta(seconds=min(base_seconds * factor, MAX_INTERVAL_SECONDS))


def poll_invoice(invoice: Invoice, token: str, provider, *, now: dt.datetime, base_seconds: int) -> str | None:
    """Ask the provider about one claimed invoice, apply the answer, schedule the next poll."""
    try:
        status = quotes.deposit_status(provider, invoice)
    except ProviderRejected as error:
        # The provider does not know the address: retrying soon will not help; a human should look.
        log.error("provider refused status of %s: %s", invoice.public_id, error)
        claims.release(Invoice, invoice.id, token, next_poll_at=now + dt.timedelta(seconds=MAX_INTERVAL_SECONDS))
        return None
    except ProviderError as error:
        log.warning("provider unavailable polling %s: %s", invoice.public_id, error)
        claims.release(Invoice, invoice.id, token, next_poll_at=now + dt.timedelta(seconds=base_seconds))
        return None
    if status.status == base.PENDING_DEPOSIT and invoice.provider_status == base.PENDING_DEPOSIT:
        # Nothing new, the common case by far: one UPDATE, no transaction, no re-read.
        claims.release(Invoice, invoice.id, token, next_poll_at=next_poll_at(invoice, now=now, base_seconds=base_seconds))
        return status.status
    with db.atomic():
        invoice = payments.apply_deposit_status(invoice, status, now=now)
        claims.release(Invoice, invoice.id, token,
                       next_poll_at=next_poll_at(invoice, now=now, base_seconds=base_seconds))
    return status.status


def poll_due(phase: str, provider, *, clock: Callable[[], dt.datetime], base_seconds: int, batch_size: int,
             concurrency: int, lease_seconds: int = LEASE_SECONDS, time_budget: float = 20.0) -> int:
    """Claim and poll due invoices batch after batch, until none is due or the budget is spent."""
    polled, started = 0, time.monotonic()
    # The scheduler ticks every `base_seconds` and a poll reschedules `base_seconds` after itself:
    # without slack, an invoice due a few ms after a tick waits one whole extra interval
    # (measured by bench/payflow.py: p50 18.6 s from payment to invoice.paid at 10 s ticks).
    slack = dt.timedelta(seconds=base_seconds * TICK_SLACK)
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=f"poll-{phase}") as pool:
        while time.monotonic() - started < time_budget:
            now = clock()
            token, invoices = claims.claim_due(Invoice, due(phase, now + slack), order_by=(Invoice.next_poll_at,),
                                                  now=now, lease_seconds=lease_seconds, limit=batch_size)
            if not invoices:
                break

            def one(invoice, token=token, now=now):
                with db.connection_context():
                    return poll_invoice(invoice, token, provider, now=now, base_seconds=base_seconds)

            list(pool.map(one, invoices))      # re-raises the first unexpected error: the job fails
            polled += len(invoices)
            if len(invoices) < batch_size:
                break
    return polled
