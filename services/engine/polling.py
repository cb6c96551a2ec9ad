"""Asking the provider about deposits: which invoices are due, how often, and one poll.

Two pollers share this code (docs/payment-engine.md): `chain` follows invoices until the deposit
is confirmed (or refunded, failed, or the watch window closes); `settlement` follows paid
invoices whose conversion is still running, until `SUCCESS` settles them. Each claims its due
invoices in batches (infra/claims.py) and polls them concurrently inside one job.
"""
from __future__ import annotations

import collections
import datetime as dt
from concurrent.futures import ThreadPoolExecutor
import logging
import time
from typing import Callable

from infra import claims, locks, metrics, nudges, queues
from models.base import db
from models.invoices import Invoice
from models.polls import PollState
from providers import base
from providers.base import ProviderError, ProviderRejected
from services.engine import invoice_states, payments, poll_state, quotes
from services.engine.poll_state import WATCH_AFTER_DEADLINE

log = logging.getLogger("tender.polling")
LEASE_SECONDS = 60   # default lease: longer than one poll can take (provider timeout x retries)
HOT_AFTER_QUOTE = dt.timedelta(minutes=15)      # a buyer who just took an address is paying now
MAX_INTERVAL_SECONDS = 1800
TICK_SLACK = 0.2     # a tick also takes invoices due within this fraction of an interval
# Provider statuses while the buyer's money moves: the next read is likely to change something.
MONEY_MOVING = (base.KNOWN_DEPOSIT_TX, base.PROCESSING, base.SUCCESS)
JOBS = {"chain": "jobs.chain.poll_deposits", "settlement": "jobs.settlement.poll_settlements"}

PHASES = ("chain", "settlement")   # which poller follows an invoice: poll_state.phase_of


def due(phase: str, now: dt.datetime):
    """The poll states `phase` may claim at `now` (models/polls.py). The watch window is repeated
    here so that no bookkeeping slip can keep an old invoice polled."""
    return (PollState.phase == phase) & (PollState.next_poll_at <= now) & (PollState.watch_until > now)


def _claimed(token: str):
    # The claimed invoices, read once: the poll, its answer's compare-and-set and the next
    # schedule all work from this read.
    return Invoice.select().join(PollState).where(PollState.claim_token == token)


def is_hot(invoice: Invoice, now: dt.datetime) -> bool:
    """Polled every HOT_POLL_INTERVAL_SECONDS: a quote committed in the last 15 minutes, or a deposit
    the provider knows and is converting. Not an invoice held for review, nor an underpaid one
    waiting for its buyer past those 15 minutes."""
    if invoice.review_reason is not None:
        return False
    quoted_recently = invoice.quoted_at is not None and now - invoice.quoted_at < HOT_AFTER_QUOTE
    return quoted_recently or (invoice.deposit_seen_at is not None and invoice.provider_status in MONEY_MOVING)


def next_poll_at(invoice: Invoice, *, now: dt.datetime, base_seconds: int,
                 hot_seconds: int | None = None) -> dt.datetime | None:
    """When to ask again, or None never again: at the provider's final word, once settled, or past
    the deadline plus the watch window, whatever the invoice's state."""
    if not invoice.deposit_address or now > invoice.expires_at + WATCH_AFTER_DEADLINE:
        return None
    if invoice.status in ("refunded", "failed") or invoice.provider_status in (base.REFUNDED, base.FAILED):
        return None
    if invoice.status == "paid" and invoice.swap_status is None:
        return None                                       # settled: nothing left to learn
    if hot_seconds is not None and is_hot(invoice, now):
        return now + dt.timedelta(seconds=hot_seconds)
    if invoice.deposit_seen_at is not None:
        factor = 1 if invoice.review_reason is None else 3
    elif invoice.status in invoice_states.CLOSED_UNPAID:
        factor = 12                                       # only a late or crossing deposit can still come
    else:
        age = now - (invoice.quoted_at or invoice.created_at)
        factor = 1 if age < dt.timedelta(minutes=10) else 3 if age < dt.timedelta(hours=1) else 12
    return now + dt.timedelta(seconds=min(base_seconds * factor, MAX_INTERVAL_SECONDS))


def request_poll(phase: str) -> None:
    """Poll now (after a commit): enqueue a run, and make a run already in progress claim once more
    before it ends, so a nudge coalesced into it never waits for the next tick."""
    try:
        queues.redis().set(_wanted_key(phase), "1", ex=60)
    except Exception as error:  # Redis down: the scheduler's tick finds the work anyway
        log.warning("poll request on %s not recorded: %s", phase, error)
    nudges.nudge(phase, JOBS[phase])


def _wanted_key(phase: str) -> str:
    return f"tender:poll-wanted:{phase}"


def _take_request(phase: str) -> bool:
    try:
        return queues.redis().getdel(_wanted_key(phase)) is not None
    except Exception:
        return False


def poll_invoice(invoice: Invoice, token: str, provider, *, now: dt.datetime, base_seconds: int,
                 hot_seconds: int | None = None) -> str | None:
    """Ask the provider about one claimed invoice, apply the answer, schedule the next poll."""
    try:
        status = quotes.deposit_status(provider, invoice)
    except ProviderRejected as error:
        # The provider does not know the address: retrying soon will not help; a human should look.
        log.error("provider refused status of %s: %s", invoice.public_id, error)
        poll_state.reschedule(invoice, token, at=now + dt.timedelta(seconds=MAX_INTERVAL_SECONDS))
        return None
    except ProviderError as error:
        log.warning("provider unavailable polling %s: %s", invoice.public_id, error)
        poll_state.reschedule(invoice, token, at=now + dt.timedelta(seconds=base_seconds))
        return None
    if status.status == base.PENDING_DEPOSIT and invoice.provider_status == base.PENDING_DEPOSIT:
        # Nothing new, the common case by far: one UPDATE of the poll state, no transaction.
        poll_state.reschedule(invoice, token, at=next_poll_at(invoice, now=now, base_seconds=base_seconds,
                                                               hot_seconds=hot_seconds))
        return status.status
    with locks.write_transaction():     # the answer's writes and the next schedule commit together
        current = payments.apply_deposit_status(invoice, status, now=now)
        poll_state.reschedule(current, token, at=next_poll_at(current, now=now, base_seconds=base_seconds,
                                                               hot_seconds=hot_seconds))
    return status.status


def poll_due(phase: str, provider, *, clock: Callable[[], dt.datetime], base_seconds: int, batch_size: int,
             concurrency: int, hot_seconds: int | None = None, lease_seconds: int = LEASE_SECONDS,
             time_budget: float = 20.0) -> int:
    """Claim and poll due invoices batch after batch, until none is due or the budget is spent.

    A poll request (`request_poll`) that arrives while this runs makes it claim once more."""
    polled, started = 0, time.monotonic()
    # The scheduler ticks every `tick` seconds and a poll reschedules an interval after itself:
    # without slack, an invoice due a few ms after a tick waits one whole extra interval
    # (measured by bench/payflow.py: p50 18.6 s from payment to invoice.paid at 10 s ticks).
    tick = min(base_seconds, hot_seconds or base_seconds)
    slack = dt.timedelta(seconds=tick * TICK_SLACK)
    nudges.run_started(JOBS[phase])            # a request from now on gets a run of its own
    _take_request(phase)                       # this run's first claim sees every request so far
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=f"poll-{phase}") as pool:
        while time.monotonic() - started < time_budget:
            now = clock()
            token, invoices = claims.claim_due(PollState, due(phase, now + slack), order_by=(PollState.next_poll_at,),
                                               now=now, lease_seconds=lease_seconds, limit=batch_size, read=_claimed)

            def one(invoice, token=token, now=now):
                with db.connection_context():
                    return poll_invoice(invoice, token, provider, now=now, base_seconds=base_seconds,
                                        hot_seconds=hot_seconds)

            list(pool.map(one, invoices))      # re-raises the first unexpected error: the job fails
            metrics.add("provider_reads", collections.Counter(
                (phase, "hot" if is_hot(invoice, now) else "idle") for invoice in invoices))
            polled += len(invoices)
            if len(invoices) < batch_size and not _take_request(phase):
                break
    return polled
