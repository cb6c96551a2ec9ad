"""Delivery runs (docs/operations.md, docs/webhooks.md), the one path from an outbox row to an
attempt: fan out events (services/webhooks/outbox.py), claim due deliveries in batches
(infra/claims.py), send them concurrently from one job (webhook_sending.py), record every
attempt, and schedule the next one on the row.

A claim reserves a delivery for `claim_seconds` (longer than any attempt can last) under a
fresh token: no other worker can claim it meanwhile, so one delivery is never attempted twice
at once, and a worker that dies mid-attempt leaves a claim that simply runs out, after which
the delivery is claimed again (the lost attempt is recorded as `interrupted`). Results are
written only where the token still matches, so a succeeded delivery is never sent again by a
duplicated or retried job.
"""
from __future__ import annotations

import collections
import dataclasses
import datetime as dt
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
import logging
import os
import queue
import random
import secrets
import threading
import time

import peewee as pw

from core import clock, ids
from infra import claims, database, metrics, nudges
from infra.locks import write_transaction
from models.base import db, replace_connection
from models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from services.webhooks import outbox
from services.webhooks.webhook_sending import Outcome, Work, render_body, send, shared_connections

log = logging.getLogger("tender.webhooks")

DISABLE_AFTER = dt.timedelta(days=3)
JITTER = 0.10
STORE_SHARE = 4                 # a store's backlog holds at most 1/4 of a run's slots in flight,
STORE_SHARE_ALONE = 2           # 1/2 while no other store has a delivery due and its receivers are quick
STORE_SHARE_OF_NEW_EVENTS = 2   # with its new events' first attempts, at most 1/2


@dataclass(frozen=True)
class DeliveryPolicy:
    retry_schedule: tuple[int, ...]
    timeout_seconds: int
    claim_seconds: int
    concurrency: int
    allow_private: bool
    max_in_flight_per_endpoint: int = 4
    ca_bundle: str | None = None        # tests with their own CA only; None trusts the public CAs

    @property
    def caps(self) -> claims.DeliveryCaps:
        """A store holds at most a quarter of a run's slots (never fewer than one endpoint's cap);
        half while it is the only store with deliveries due and its attempts are quick."""
        per_store = max(self.max_in_flight_per_endpoint, self.concurrency // STORE_SHARE)
        alone = max(per_store, self.concurrency // STORE_SHARE_ALONE)
        return claims.DeliveryCaps(self.max_in_flight_per_endpoint, per_store, self.claim_seconds, alone)

    @property
    def first_attempt_caps(self) -> claims.DeliveryCaps:
        """A fan-out's first attempts may take their store to half a run's slots, so one new event
        reaches a store's 16 endpoints at once; its backlog never takes it past `caps`."""
        per_store = max(self.max_in_flight_per_endpoint, self.concurrency // STORE_SHARE_OF_NEW_EVENTS)
        return claims.DeliveryCaps(self.max_in_flight_per_endpoint, per_store, self.claim_seconds)

    @classmethod
    def from_settings(cls, settings) -> "DeliveryPolicy":
        return cls(settings.webhook_retry_schedule, settings.webhook_timeout_seconds,
                   settings.webhook_claim_seconds, settings.webhook_concurrency,
                   settings.allow_private_webhook_urls, settings.webhook_max_in_flight_per_endpoint)

    def next_attempt_at(self, attempts_made: int, now: dt.datetime) -> dt.datetime | None:
        """When to try again after `attempts_made` failed attempts; None when out of retries."""
        if attempts_made > len(self.retry_schedule):
            return None
        delay = self.retry_schedule[attempts_made - 1]
        return now + dt.timedelta(seconds=delay * (1 + random.uniform(0, JITTER)))


@dataclass
class RunCounts:
    succeeded: int = 0
    failed_attempts: int = 0
    given_up: int = 0
    outcomes: list = field(default_factory=list, repr=False)


def claim_due(policy: DeliveryPolicy, *, now: dt.datetime, limit: int) -> list[Work]:
    """Claim up to `limit` due deliveries for this run (infra/claims.claim_deliveries: stores in
    turn, within the per-endpoint and per-store caps) and read what their attempts need."""
    return _claim(policy, now=now, limit=limit)[0]


def _claim(policy: DeliveryPolicy, *, now: dt.datetime, limit: int) -> tuple[list[Work], bool]:
    """`claim_due`, and whether due deliveries were left."""
    token = secrets.token_hex(16)
    claimed = claims.claim_deliveries(token, policy.caps, now=now, limit=limit)
    return _work(claimed.rows, token), claimed.more_due


def record_and_claim(outcomes: list[Outcome], policy: DeliveryPolicy, *, now: dt.datetime, counts: RunCounts,
                     limit: int) -> tuple[list[Work], bool]:
    """Record `outcomes` and claim up to `limit` more in one transaction: a store at its in-flight
    cap gets its next attempts as its last ones are written, with one commit for both (a run
    sending one store's backlog spent half its time in these two transactions, one after the
    other). If that transaction fails, the results are written by `record` (with its retries)
    and the claim made on its own: a result is never lost to a failed claim."""
    token = secrets.token_hex(16)
    try:
        with write_transaction():
            written = _write_outcomes(outcomes, policy, now=now)
            claimed = claims.claim_deliveries_in_transaction(token, policy.caps, now=now, limit=limit)
    except Exception:
        log.warning("results and claim not written together; writing the results on their own", exc_info=True)
        record(outcomes, policy, now=now, counts=counts)
        return _claim(policy, now=now, limit=limit)
    _recorded(written, counts)
    return _work(claimed.rows, token), claimed.more_due


def _work(rows: list[dict], token: str) -> list[Work]:
    """What each claimed delivery's attempt needs, from the claim's own read (infra/claims.py)."""
    now = clock.utcnow()
    work = []
    for row in rows:
        if row["endpoint_id"] is not None:
            keys = [row["secret"]]
            expires = row["previous_secret_expires_at"]
            if row["previous_secret"] and expires and expires > now:
                keys.append(row["previous_secret"])
            url, enabled, failing_since = row["endpoint_url"], row["enabled"], row["failing_since"]
        else:
            keys, url, enabled, failing_since = [row["callback_secret"]], row["url"], True, None
        work.append(Work(delivery_id=row["id"], public_id=row["public_id"], number=row["attempts"],
                         claim_token=token, url=url, secrets=keys, body=render_body(row["payload"]),
                         event_public_id=row["event_public_id"], event_type=row["event_type"],
                         endpoint_id=row["endpoint_id"], endpoint_enabled=enabled,
                         endpoint_failing_since=failing_since,
                         integration_public_id=row["integration_public_id"]))
    return work


def record(outcomes: list[Outcome], policy: DeliveryPolicy, *, now: dt.datetime, counts: RunCounts) -> None:
    """Write the attempts and the deliveries' new state, and the endpoints' health, all or nothing.

    A lost database connection (PostgreSQL restarting, a dropped socket) is retried once on a fresh
    connection: given up, the claims would lapse and these deliveries be sent a second time. Any
    other error writing the batch costs no attempt its result: each is then written on its own."""
    try:
        written = _record_once(outcomes, policy, now=now)
    except (pw.OperationalError, pw.InterfaceError) as error:
        log.warning("delivery results not written (%s); retrying once on a new connection", error)
        replace_connection()
        written = _record_once(outcomes, policy, now=now)
    except Exception:
        log.exception("delivery results not written as a batch; writing them one by one")
        written = RunCounts()
        for outcome in outcomes:
            _count(_record_alone(outcome, policy, now=now), written)
    _recorded(written, counts)


def _recorded(written: RunCounts, counts: RunCounts) -> None:
    """A committed batch of results: into the run's counts and the metrics."""
    metrics.add("webhook_deliveries", {(outcome,): n for outcome, n in
                                       (("succeeded", written.succeeded), ("failed", written.failed_attempts)) if n})
    _count(written, counts)


def _count(written: RunCounts, counts: RunCounts) -> None:
    """Add what a committed write recorded to the run's counts."""
    counts.succeeded += written.succeeded
    counts.failed_attempts += written.failed_attempts
    counts.given_up += written.given_up
    counts.outcomes.extend(written.outcomes)


def _record_alone(outcome: Outcome, policy: DeliveryPolicy, *, now: dt.datetime) -> RunCounts:
    """One result; if even that cannot be written, the result without the receiver's text (the
    status and the outcome are what must not be lost)."""
    try:
        return _record_once([outcome], policy, now=now)
    except (pw.OperationalError, pw.InterfaceError):
        raise
    except Exception as error:
        log.exception("delivery %s: result not written; writing it without its texts", outcome.work.public_id)
        bare = dataclasses.replace(outcome, excerpt=None,
                                   error=None if outcome.ok else f"{(outcome.error or '')[:100]!a} "
                                                                f"(not recordable: {type(error).__name__})")
        return _record_once([bare], policy, now=now)


def _record_once(outcomes: list[Outcome], policy: DeliveryPolicy, *, now: dt.datetime) -> RunCounts:
    if any(map(_may_change_health, outcomes)):
        with db.atomic():
            return _write_outcomes(outcomes, policy, now=now)
    # The results and their attempts alone need no transaction of ours: compare_and_set_each
    # writes them all or nothing (on PostgreSQL one statement, without BEGIN and COMMIT).
    return _write_outcomes(outcomes, policy, now=now)


def _write_outcomes(outcomes: list[Outcome], policy: DeliveryPolicy, *, now: dt.datetime) -> RunCounts:
    """The attempts, the deliveries' new state and the endpoints' health, in the caller's
    transaction (which only the endpoints' health needs: `_record_once`)."""
    counts = RunCounts()
    endpoint_results = {}
    results = [(outcome, _result_fields(outcome, policy, now=now)) for outcome in outcomes]
    kept = _write_results(results, now=now)
    for outcome, fields in results:
        work = outcome.work
        if work.delivery_id not in kept:
            # The claim ran out and another worker took over, or the endpoint was deleted.
            log.warning("delivery %s: result of attempt %s dropped (claim lost)", work.public_id, work.number)
            continue
        counts.outcomes.append(outcome)
        if outcome.ok:
            counts.succeeded += 1
        else:
            counts.failed_attempts += 1
            counts.given_up += fields["status"] == "failed"
        if _counts_for_health(work):
            endpoint_results.setdefault(work.endpoint_id, []).append(outcome)
    for endpoint_id, results_of_endpoint in endpoint_results.items():
        _update_endpoint_health(endpoint_id, results_of_endpoint, now=now)
    return counts


def _result_fields(outcome: Outcome, policy: DeliveryPolicy, *, now: dt.datetime) -> dict:
    """The delivery's new state after this attempt."""
    if outcome.ok:
        return dict(status="succeeded", succeeded_at=now, next_attempt_at=None)
    retry_at = policy.next_attempt_at(outcome.work.number, now) if outcome.work.endpoint_enabled else None
    return dict(status="pending" if retry_at else "failed", next_attempt_at=retry_at)


def _write_results(results: list[tuple[Outcome, dict]], *, now: dt.datetime) -> set:
    """Write every result where the claim token still matches, and an attempt for each one
    written; the ids of the deliveries written (one statement for the whole batch on
    PostgreSQL: infra/database.py)."""
    rows = [(outcome.work.delivery_id, outcome.work.claim_token,
             dict(fields, last_status_code=outcome.status_code, last_latency_ms=outcome.latency_ms,
                  last_error=outcome.error, last_response_excerpt=outcome.excerpt))
            for outcome, fields in results]
    attempts = {outcome.work.delivery_id: _attempt(outcome) for outcome, _ in results}
    return database.compare_and_set_each(WebhookDelivery, WebhookDelivery.claim_token, rows,
                                         same=dict(claim_token=None, updated_at=now), keep_if_none=("succeeded_at",),
                                         insert=(WebhookAttempt, attempts))


def _attempt(outcome: Outcome) -> dict:
    """The attempt row of a result."""
    work = outcome.work
    return dict(id=ids.new_uuid(), delivery=work.delivery_id, number=work.number,
                outcome="succeeded" if outcome.ok else "failed", started_at=outcome.started_at,
                status_code=outcome.status_code, latency_ms=outcome.latency_ms,
                error=outcome.error, response_excerpt=outcome.excerpt)


def _counts_for_health(work: Work) -> bool:
    """Whether this attempt's result counts for its endpoint's health (an enabled endpoint's)."""
    return work.endpoint_id is not None and work.endpoint_enabled


def _may_change_health(outcome: Outcome) -> bool:
    """Whether this result, if written, could change its endpoint's health (`_update_endpoint_health`):
    a failure may mark the endpoint failing or disable it, a success clears its failing mark.
    Asked of each result before the write, since which are written is known only after it (and
    the endpoint's health is decided from those alone)."""
    return _counts_for_health(outcome.work) and (not outcome.ok or outcome.work.endpoint_failing_since is not None)


def _update_endpoint_health(endpoint_id, results: list[Outcome], *, now: dt.datetime) -> None:
    """The endpoint's health after these results were written (only results for which
    `_may_change_health` holds may change it: they are written in a transaction with it)."""
    failing_since = results[0].work.endpoint_failing_since
    where = WebhookEndpoint.id == endpoint_id
    if any(result.status_code == 410 for result in results):
        WebhookEndpoint.update(enabled=False, disabled_reason="the endpoint answered 410 Gone",
                               updated_at=now).where(where).execute()
    elif any(result.ok for result in results):
        if failing_since is not None:
            WebhookEndpoint.update(failing_since=None).where(where).execute()
    elif failing_since is None:
        WebhookEndpoint.update(failing_since=now).where(where & WebhookEndpoint.failing_since.is_null()).execute()
    elif now - failing_since >= DISABLE_AFTER:
        WebhookEndpoint.update(enabled=False, updated_at=now,
                               disabled_reason="every delivery failed for 3 days").where(where).execute()


LOOK_EVERY_SECONDS = 0.5        # while attempts are in flight, how often a run looks for newly due work
RECORD_WITHIN_SECONDS = 0.25    # how long a finished attempt's result may wait for others to batch with

def fan_out_and_deliver(policy: DeliveryPolicy, *, now=clock.utcnow) -> tuple[int, RunCounts]:
    """The nudged run: fan out every undispatched event, however young, and send the deliveries it
    creates. As many as the run's slots can send within their claim are claimed in the fan-out's
    own transaction (infra/claims.claim_deliveries, within the caps), so their first attempt
    costs no claim transaction of its own; the rest are claimed as slots free. A run that dies
    leaves claims that run out, and a delivery run takes them over (docs/webhooks.md).
    Returns (deliveries created, what the run's attempts did)."""
    nudges.run_started(outbox.FAN_OUT_JOB)
    # As many as the run's slots can surely send before their claim runs out (attempts are cut
    # off at their deadline), so a claimed delivery is never sent twice.
    rounds = max(1, policy.claim_seconds // max(1, policy.timeout_seconds) - 1)
    first = outbox.FirstAttempts(token=secrets.token_hex(16), caps=policy.first_attempt_caps,
                                 budget=policy.concurrency * rounds)
    created = outbox.relay(now=now(), grace=dt.timedelta(0), first=first)
    counts = deliver_due(policy, now=now, first=_work(first.rows, first.token),
                         claim_more=first.left_unclaimed > 0)
    return created, counts


def deliver_due(policy: DeliveryPolicy, *, now=clock.utcnow, max_seconds: float = 60.0,
                first: list[Work] = (),
                claim_more: bool = True) -> RunCounts:
    """Send everything due, keeping up to `policy.concurrency` attempts in flight, until nothing is
    due or `max_seconds` have passed (the sweep starts another run). `now` is a clock function.

    Claims and results are batched: results are written, and slots refilled, when half the
    slots have finished (or nothing else is in flight), so a transaction covers many attempts;
    but no result waits more than RECORD_WITHIN_SECONDS for others to join its batch, since an
    unrecorded attempt still counts against its endpoint's and store's in-flight caps. When the
    caps held due deliveries back, the results are written in the same transaction as the claim
    of what follows them (a store's backlog goes out its cap's worth at a time). While
    attempts are in flight the run looks for newly due work every LOOK_EVERY_SECONDS, fanning
    out new events first (fan-out jobs queue behind this run on the same worker), so slow
    endpoints' attempts never delay another's deliveries by more than that.

    `first`: work already claimed by the caller (a fan-out run), sent at once; with `claim_more`
    false the run claims nothing else until its next look."""
    counts = RunCounts()
    began = last_look = time.monotonic()
    finished, oldest_finished = [], 0.0
    half = max(1, policy.concurrency // 2)
    # Did the last claim fill every slot it asked for (so more may be claimable now)? What a
    # fan-out left unclaimed is claimed once its first attempts are done: it was left to the caps.
    backlog = claim_more and not first
    # Did the last claim leave due deliveries to the caps (a store or endpoint at its limit, or
    # what a fan-out could not claim)? Then results are written in the transaction that claims
    # their successors: one commit instead of two per cap's worth of a store's backlog. (Claiming
    # as each half finished, with the other half in flight, was slower: on two cores, the
    # sending threads made each of the transaction's round trips wait for the interpreter.)
    capped = bool(first) and claim_more
    sending = _Sending(policy)
    sending.start(first)
    while True:
        claiming = time.monotonic() - began < max_seconds
        if finished and (len(finished) >= half or not sending.held
                         or time.monotonic() - oldest_finished >= RECORD_WITHIN_SECONDS):
            if capped and claim_more and claiming:
                limit = policy.concurrency - sending.held
                claimed, capped = record_and_claim(finished, policy, now=now(), counts=counts, limit=limit)
                backlog = len(claimed) == limit
                sending.start(claimed)
            else:
                record(finished, policy, now=now(), counts=counts)
            finished = []
        free = policy.concurrency - sending.held - len(finished)
        # Claim to refill slots while the backlog lasts; once a claim came back short, claim
        # again only when everything has finished (a last look for newly due work) or at the
        # next look. Each claim is a transaction: claiming into an empty backlog cost 2 of 4
        # per event.
        look = bool(sending.held) and free > 0 and time.monotonic() - last_look >= LOOK_EVERY_SECONDS
        wants_more = (claim_more and ((not sending.held and not finished) or (backlog and free >= half))) or look
        if wants_more and claiming:
            if look:
                outbox.relay(now=now(), grace=dt.timedelta(0))
                claim_more = True          # the look may have made new deliveries due
            last_look = time.monotonic()
            claimed, capped = _claim(policy, now=now(), limit=free)
            backlog = len(claimed) == free
            sending.start(claimed)
        if not sending.held:
            if finished:
                continue
            break
        if not claiming:
            # Time is up. Waiting here for slow attempts (up to their 10 s deadline) would hold
            # back the jobs queued behind this run, the fan-out of other stores' new events
            # among them: a finisher thread records those attempts when they end instead.
            if finished:
                record(finished, policy, now=now(), counts=counts)
            _finish_later(sending.all_started(), policy, now=now)
            break
        # Wake for an attempt to finish, or to record, or for the next look.
        wakes = [oldest_finished + RECORD_WITHIN_SECONDS] if finished else []
        if claiming and policy.concurrency - sending.held - len(finished) > 0:
            wakes.append(last_look + LOOK_EVERY_SECONDS)
        for outcome in sending.wait(min(wakes) if wakes else None):
            if not finished:
                oldest_finished = time.monotonic()
            finished.append(outcome)
    return counts


FIRST_WINDOW = 2            # attempts a run starts at once, until the receivers prove slow
STALL_SECONDS = 0.025       # no attempt finished for this long while others wait: twice as many at once


class _Sending:
    """A run's attempts: started on the process's sending threads, at most `window` at once.

    Receivers that answer within milliseconds gain nothing from more attempts at once (on two
    cores, 16 threads posting together took longer than the same posts two at a time), so a run
    starts two, and starts the next as one finishes; whenever no attempt has finished for
    STALL_SECONDS while others wait, the window doubles, up to the run's concurrency. Slow or
    hanging receivers therefore hold up the others by at most a few times STALL_SECONDS (all 32
    slots are in use within 0.1 s). Whatever waits here is already claimed: it counts against
    the run's slots and the caps like an attempt in flight."""

    def __init__(self, policy: DeliveryPolicy):
        self._connections, self._policy, self._pool = shared_connections(policy), policy, _sending_pool()
        self._queued: collections.deque = collections.deque()
        self._in_flight: dict = {}
        self._window = min(FIRST_WINDOW, policy.concurrency)
        self._progress = time.monotonic()
        # Finished attempts come back through a queue: waiting on all the futures at once cost
        # the run a pass over every one of them (and their locks) per attempt that finished.
        self._done = queue.SimpleQueue()

    @property
    def held(self) -> int:
        return len(self._in_flight) + len(self._queued)

    def start(self, claimed: list[Work]) -> None:
        self._queued.extend(claimed)
        self._launch()

    def _launch(self) -> None:
        while self._queued and len(self._in_flight) < self._window:
            future = self._pool.submit(send, self._connections, self._queued.popleft(), self._policy)
            self._in_flight[future] = True
            future.add_done_callback(self._done.put)

    def wait(self, until: float | None) -> list[Outcome]:
        """The outcomes of attempts that finished by `until` (a monotonic time; None: no limit),
        at least one unless that came first."""
        while True:
            wakes = [until] if until is not None else []
            if self._queued:
                wakes.append(self._progress + STALL_SECONDS)
            timeout = max(0.0, min(wakes) - time.monotonic()) if wakes else None
            try:
                done = [self._done.get(timeout=timeout)]
            except queue.Empty:
                if self._queued and time.monotonic() - self._progress >= STALL_SECONDS:
                    self._window = min(self._policy.concurrency, self._window * 2)
                    self._progress = time.monotonic()
                    self._launch()
                if until is not None and time.monotonic() >= until:
                    return []
                continue
            while not self._done.empty():
                done.append(self._done.get())
            self._progress = time.monotonic()
            for future in done:
                del self._in_flight[future]
            self._launch()
            return [future.result() for future in done]

    def all_started(self) -> list:
        """Start whatever still waits (the run is ending) and return every attempt in flight."""
        self._window = max(self._window, len(self._in_flight) + len(self._queued))
        self._launch()
        return list(self._in_flight)


# Sending threads are kept for the process's life: starting them per run cost a third of a
# fan-out run (a thread start waits for the thread to run, on cores the sends keep busy). The
# cap is far above any run's slots, so an attempt never queues behind another run's (a run that
# ran out of time leaves its slow attempts to a finisher): a thread is started only when none
# is idle, and what a run keeps in flight stays bounded by its `concurrency`.
SENDING_THREADS_CAP = 512
_pools: dict = {}
_pools_lock = threading.Lock()


def _sending_pool() -> ThreadPoolExecutor:
    """The process's pool of sending threads; a forked child builds its own (threads do not
    survive a fork)."""
    with _pools_lock:
        pool = _pools.get(os.getpid())
        if pool is None:
            _pools.clear()
            pool = _pools[os.getpid()] = ThreadPoolExecutor(max_workers=SENDING_THREADS_CAP,
                                                            thread_name_prefix="webhook")
        return pool


def _finish_later(futures: list, policy: DeliveryPolicy, *, now) -> None:
    """Record the results of attempts still in flight once they end (each by its deadline), on a
    thread of its own with its own database connection. Not a daemon: a worker that exits waits
    for it, so these results are not lost to a lapsed claim."""
    def finish():
        outcomes = [future.result() for future in futures]
        with db.connection_context():
            record(outcomes, policy, now=now(), counts=RunCounts())
    threading.Thread(target=finish, name="webhook-finisher").start()
