"""Asking the provider about deposits: which invoices are due, how often, and one poll.

Three pollers share this code (docs/payment-engine.md): `chain` follows invoices until the deposit
is confirmed (or refunded, failed, or the watch window closes); `settlement` follows paid
invoices whose conversion is still running, until `SUCCESS` settles them; `refunds` follows the
merchants' refunds from their funding to the delivery to the buyer (docs/refunds.md). Each claims
its due rows in batches (infra/claims.py) and polls them concurrently inside one job, at the same
adaptive pace: a refund's funding is a deposit like a buyer's. The schedule and claim of an
invoice or a refund are its poll state (models/polls.py).
"""
from __future__ import annotations

import collections
import datetime as dt
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
import logging
import time
from typing import Callable

from infra import claims, locks, metrics, nudges, queues
from models.base import db
from models.invoices import Invoice
from models.polls import PollState
from models.refunds import Refund
from providers import base
from providers.base import DepositStatus, ProviderError, ProviderRejected
from services.engine import deposits, invoice_states, payments, poll_state, refund_answers, refund_states
from services.engine.poll_state import WATCH_AFTER_DEADLINE

log = logging.getLogger("tender.polling")
LEASE_SECONDS = 5    # default lease, renewed every second while the batch runs (claims.keep_leased)
HOT_AFTER_QUOTE = dt.timedelta(minutes=15)      # a buyer who just took an address is paying now
MAX_INTERVAL_SECONDS = 1800
TICK_SLACK = 0.2     # a tick also takes invoices due within this fraction of an interval
# Provider statuses while the buyer's money moves: the next read is likely to change something.
MONEY_MOVING = (base.KNOWN_DEPOSIT_TX, base.PROCESSING, base.SUCCESS)
JOBS = {"chain": "jobs.chain.poll_deposits", "settlement": "jobs.settlement.poll_settlements",
        "refunds": "jobs.chain.poll_refunds"}
QUEUES = {"chain": "chain", "settlement": "settlement", "refunds": "chain"}

PHASES = ("chain", "settlement")   # which poller follows an invoice: poll_state.phase_of


def due(phase: str, now: dt.datetime):
    """The poll states `phase` may claim at `now` (models/polls.py). The watch window is repeated
    here so that no bookkeeping slip can keep an old invoice or refund polled."""
    return (PollState.phase == phase) & (PollState.next_poll_at <= now) & (PollState.watch_until > now)


def _claimed(token: str):
    # The claimed invoices, read once: the poll, its answer's compare-and-set and the next
    # schedule all work from this read.
    return Invoice.select().join(PollState, on=(PollState.invoice == Invoice.id)).where(PollState.claim_token == token)


def _claimed_refunds(token: str):
    return Refund.select().join(PollState, on=(PollState.refund == Refund.id)).where(PollState.claim_token == token)


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
    return adaptive_poll_at(invoice, now=now, base_seconds=base_seconds, hot_seconds=hot_seconds,
                            closed=invoice.status in invoice_states.CLOSED_UNPAID)


def refund_next_poll_at(refund: Refund, *, now: dt.datetime, base_seconds: int,
                        hot_seconds: int | None = None) -> dt.datetime | None:
    """A refund's next poll, or None never again: once it succeeded or failed, at the provider's
    final word, or past its funding deadline plus the watch window, whatever its state."""
    if now > refund.expires_at + WATCH_AFTER_DEADLINE or refund.status in refund_states.FINAL:
        return None
    if refund.provider_status in (base.REFUNDED, base.FAILED):
        return None
    return adaptive_poll_at(refund, now=now, base_seconds=base_seconds, hot_seconds=hot_seconds,
                            closed=refund.status in refund_states.CLOSED_UNFUNDED)


def adaptive_poll_at(row, *, now: dt.datetime, base_seconds: int, hot_seconds: int | None,
                     closed: bool) -> dt.datetime:
    """The pace every poller keeps (docs/payment-engine.md): hot rows every `hot_seconds`; a deposit
    seen at the base interval; `closed` ones (expired, cancelled) rarely; others back off with age."""
    if hot_seconds is not None and is_hot(row, now):
        return now + dt.timedelta(seconds=hot_seconds)
    if row.deposit_seen_at is not None:
        factor = 1 if row.review_reason is None else 3
    elif closed:
        factor = 12                                       # only a late or crossing deposit can still come
    else:
        age = now - (row.quoted_at or row.created_at)
        factor = 1 if age < dt.timedelta(minutes=10) else 3 if age < dt.timedelta(hours=1) else 12
    return now + dt.timedelta(seconds=min(base_seconds * factor, MAX_INTERVAL_SECONDS))


def request_poll(phase: str) -> None:
    """Poll now (after a commit): enqueue a run, and make a run already in progress claim once more
    before it ends, so a nudge coalesced into it never waits for the next tick."""
    try:
        queues.redis().set(_wanted_key(phase), "1", ex=60)
    except Exception as error:  # Redis down: the scheduler's tick finds the work anyway
        log.warning("poll request on %s not recorded: %s", phase, error)
    nudges.nudge(QUEUES[phase], JOBS[phase])


def _wanted_key(phase: str) -> str:
    return f"tender:poll-wanted:{phase}"


def _take_request(phase: str) -> bool:
    try:
        return queues.redis().getdel(_wanted_key(phase)) is not None
    except Exception:
        return False


@dataclass(frozen=True)
class Watched:
    """What a poller follows: the rows that hold its schedule and claims (`claims`, due by `due`,
    read back by `read`), how a provider answer applies to one, and when to ask it next."""
    claims: type
    due: Callable
    read: Callable | None
    apply: Callable
    schedule: Callable
    reschedule: Callable
    reschedule_unchanged: Callable | None = None   # many at once: {row id: when} (None: one by one)


def _watched(phase: str) -> Watched:
    if phase == "refunds":
        return Watched(PollState, lambda now: due(phase, now), _claimed_refunds, refund_answers.apply_funding_status,
                       refund_next_poll_at, poll_state.reschedule, poll_state.reschedule_unchanged)
    return Watched(PollState, lambda now: due(phase, now), _claimed, payments.apply_deposit_status, next_poll_at,
                   poll_state.reschedule, poll_state.reschedule_unchanged)


def poll_invoice(invoice: Invoice, token: str, provider, *, now: dt.datetime, base_seconds: int,
                 hot_seconds: int | None = None) -> str | None:
    """Ask the provider about one claimed invoice, apply the answer, schedule the next poll."""
    return poll_one(_watched("chain"), invoice, token, provider, now=now, base_seconds=base_seconds,
                    hot_seconds=hot_seconds)


def poll_one(watched: Watched, row, token: str, provider, *, now: dt.datetime, base_seconds: int,
             hot_seconds: int | None = None, unchanged: dict | None = None,
             answer: DepositStatus | ProviderError | None = None) -> str | None:
    """Ask the provider about one claimed row (an invoice or a refund), apply the answer, schedule
    the next poll. `unchanged`: where to leave the next poll time of a row the answer leaves as
    it is, for the caller to write with the rest of its batch (`watched.reschedule_unchanged`).
    `answer`: the provider's answer when already read with the batch's others (`_answers`), or
    the error that read met; None: ask now."""
    status = answer if answer is not None else _answer(provider, row)
    if isinstance(status, ProviderRejected):
        # The provider does not know the address: retrying soon will not help; a human should look.
        log.error("provider refused status of %s: %s", row.public_id, status)
        watched.reschedule(row, token, at=now + dt.timedelta(seconds=MAX_INTERVAL_SECONDS))
        return None
    if isinstance(status, ProviderError):
        log.warning("provider unavailable polling %s: %s", row.public_id, status)
        watched.reschedule(row, token, at=now + dt.timedelta(seconds=base_seconds))
        return None
    if _learns_nothing(row, status):
        # No transaction, nothing written on the invoice, and the schedule written with the
        # batch's others when the caller collects them.
        at = watched.schedule(row, now=now, base_seconds=base_seconds, hot_seconds=hot_seconds)
        if unchanged is not None and at is not None:
            unchanged[row.id] = at
        else:
            watched.reschedule(row, token, at=at)
        return status.status
    with locks.write_transaction():     # the answer's writes and the next schedule commit together
        current = watched.apply(row, status, now=now)
        watched.reschedule(current, token, at=watched.schedule(current, now=now, base_seconds=base_seconds,
                                                               hot_seconds=hot_seconds))
    return status.status


def _learns_nothing(row, answer) -> bool:
    """Nothing new, the common case by far: still no deposit, as the last answer said."""
    return (isinstance(answer, DepositStatus) and answer.status == base.PENDING_DEPOSIT
            and row.provider_status == base.PENDING_DEPOSIT)


def _answer(provider, row) -> DepositStatus | ProviderError:
    try:
        return deposits.deposit_status(provider, row)
    except ProviderError as error:
        return error


def _answers(provider, rows: list) -> list:
    """The claimed rows' answers in one call to a provider that reads many at once (the sandbox:
    one SELECT for the batch), in order; from any other, Nones: each row is asked on its own in
    the poll's threads (1Click: one HTTP request each, concurrently)."""
    read_many = getattr(provider, "deposit_statuses", None)
    if read_many is None or not rows:
        return [None] * len(rows)
    try:
        return read_many([deposits.deposit_query(row) for row in rows])
    except ProviderError as error:            # the whole read failed: every row's answer
        return [error] * len(rows)


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
    watched = _watched(phase)
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=f"poll-{phase}") as pool:
        while time.monotonic() - started < time_budget:
            now = clock()
            token, rows = claims.claim_due(watched.claims, watched.due(now + slack),
                                           order_by=(watched.claims.next_poll_at,), now=now,
                                           lease_seconds=lease_seconds, limit=batch_size, read=watched.read)

            unchanged = {} if watched.reschedule_unchanged is not None else None
            leased = claims.keep_leased(watched.claims, token, claimed_at=now, lease_seconds=lease_seconds)

            def one(row, answer, token=token, now=now, unchanged=unchanged):
                with db.connection_context():
                    return poll_one(watched, row, token, provider, now=now, base_seconds=base_seconds,
                                    hot_seconds=hot_seconds, unchanged=unchanged, answer=answer)

            try:
                to_write = []
                for row, answer in zip(rows, _answers(provider, rows)):
                    if _learns_nothing(row, answer):      # here: no thread, no connection of its own
                        poll_one(watched, row, token, provider, now=now, base_seconds=base_seconds,
                                 hot_seconds=hot_seconds, unchanged=unchanged, answer=answer)
                    else:
                        to_write.append((row, answer))
                # re-raises the first unexpected error: the job fails
                list(pool.map(lambda pair: one(*pair), to_write))
            finally:
                leased.stop()
                if unchanged:
                    watched.reschedule_unchanged(token, unchanged)
            metrics.add("provider_reads", collections.Counter(
                (phase, "hot" if is_hot(row, now) else "idle") for row in rows))
            polled += len(rows)
            if len(rows) < batch_size and not _take_request(phase):
                break
    return polled
