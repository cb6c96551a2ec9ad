"""Delivery runs (docs/operations.md, docs/webhooks.md), the one path from an outbox row to an
attempt: fan out events (outbox.py), claim due deliveries in batches (delivery_claim.py, within
the caps of delivery_policy.py), send them concurrently from one job (sending_window.py,
webhook_sending.py), record every attempt and schedule the next one on the row
(delivery_results.py).

A claim reserves a delivery under a fresh token, and the run renews it every second until its
result is written (delivery_claim.keep_claimed; its lease: delivery_policy): no other worker can
claim it meanwhile, so one delivery is never attempted twice at once, and a worker that dies
mid-attempt leaves a claim that runs out seconds later, after which the delivery is claimed again
(the lost attempt is recorded as `interrupted`). Results are
written only where the token still matches, so a succeeded delivery is never sent again by a
duplicated or retried job.
"""
from __future__ import annotations

import datetime as dt
import secrets
import threading
import time

from core import clock
from infra import nudges
from models.base import db
from services.webhooks import delivery_claim, outbox
from services.webhooks.delivery_policy import DeliveryPolicy
from services.webhooks.delivery_results import RunCounts, record, record_and_claim
from services.webhooks.sending_window import SendingWindow
from services.webhooks.webhook_sending import Outcome, Work

LOOK_EVERY_SECONDS = 0.5        # while attempts are in flight, how often a run looks for newly due work
RECORD_WITHIN_SECONDS = 0.25    # how long a finished attempt's result may wait for others to batch with


def fan_out_and_deliver(policy: DeliveryPolicy, *, now=clock.utcnow) -> tuple[int, RunCounts]:
    """The nudged run: fan out every undispatched event, however young, and send the deliveries it
    creates. As many as the run's slots can send within their claim are claimed in the fan-out's
    own transaction (delivery_claim.claim_deliveries, within the caps), so their first attempt
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
    counts = deliver_due(policy, now=now, first=delivery_claim.work_of(first.rows, first.token),
                         claim_more=first.left_unclaimed > 0)
    return created, counts


def deliver_due(policy: DeliveryPolicy, *, now=clock.utcnow, max_seconds: float = 60.0,
                first: list[Work] = (), claim_more: bool = True) -> RunCounts:
    """Send everything due, keeping up to `policy.concurrency` attempts in flight, until nothing is
    due or `max_seconds` have passed (the sweep starts another run). `now` is a clock function.
    `first`: work already claimed by the caller (a fan-out run), sent at once; with `claim_more`
    false the run claims nothing else until its next look. How a run decides: DeliveryRun."""
    return DeliveryRun(policy, now=now, max_seconds=max_seconds, first=first, claim_more=claim_more).work()


class DeliveryRun:
    """One delivery run, a loop of named decisions: write what finished, claim more, stop, or wait.

    Claims and results are batched: results are written, and slots refilled, when half the
    slots have finished (or nothing else is in flight), so a transaction covers many attempts;
    but no result waits more than RECORD_WITHIN_SECONDS for others to join its batch, since an
    unrecorded attempt still counts against its endpoint's and store's in-flight caps. When the
    caps held due deliveries back, the results are written in the same transaction as the claim
    of what follows them (a store's backlog goes out its cap's worth at a time). While
    attempts are in flight the run looks for newly due work every LOOK_EVERY_SECONDS, fanning
    out new events first (fan-out jobs queue behind this run on the same worker), so slow
    endpoints' attempts never delay another's deliveries by more than that."""

    def __init__(self, policy: DeliveryPolicy, *, now, max_seconds: float, first: list[Work], claim_more: bool):
        self.policy, self.now, self.counts = policy, now, RunCounts()
        self.began = self.last_look = time.monotonic()
        self.max_seconds = max_seconds
        self.finished: list[Outcome] = []           # attempts done, their results not yet written
        self.oldest_finished = 0.0
        self.half = max(1, policy.concurrency // 2)
        # Claim again (else only at the next look): what a fan-out left unclaimed is claimed once
        # its first attempts are done, since it was left to the caps.
        self.claim_more = claim_more
        # The last claim filled every slot it asked for, so more may be claimable now.
        self.backlog = claim_more and not first
        # The last claim left due deliveries to the caps (a store or endpoint at its limit, or what
        # a fan-out could not claim): results are then written in the transaction that claims their
        # successors, one commit instead of two per cap's worth of a store's backlog. (Claiming as
        # each half finished, with the other half in flight, was slower: on two cores, the sending
        # threads made each of the transaction's round trips wait for the interpreter.)
        self.capped = bool(first) and claim_more
        self.sending = SendingWindow(policy)
        self.leases: dict[str, object] = {}         # claim token -> its renewal (heartbeats.Beating)
        self.handed_over = False                     # the finisher thread stops the renewals
        self.send(first)

    def send(self, claimed: list[Work]) -> None:
        """Start the claimed attempts, renewing each claim until its results are written."""
        for token in {work.claim_token for work in claimed} - self.leases.keys():
            self.leases[token] = delivery_claim.keep_claimed(token, lease_seconds=self.policy.lease_seconds,
                                                             now=self.now)
        self.sending.start(claimed)

    def work(self) -> RunCounts:
        try:
            return self._loop()
        finally:
            if not self.handed_over:
                for lease in self.leases.values():
                    lease.stop()

    def _loop(self) -> RunCounts:
        while True:
            in_time = self.has_time_left()
            if self.results_are_due():
                self.write_results(claim_successors=in_time and self.capped and self.claim_more)
            if in_time:
                self.claim_if_wanted()
            if not self.sending.held:
                if self.finished:
                    continue            # the last results, written on the next turn
                return self.counts
            if not in_time:
                self.leave_the_rest_to_a_finisher()
                return self.counts
            self.wait_for_attempts()

    def has_time_left(self) -> bool:
        return time.monotonic() - self.began < self.max_seconds

    def free_slots(self) -> int:
        return self.policy.concurrency - self.sending.held - len(self.finished)

    def results_are_due(self) -> bool:
        """Half the slots have finished, nothing else is in flight, or a result has waited long enough."""
        return bool(self.finished) and (len(self.finished) >= self.half or not self.sending.held
                                        or time.monotonic() - self.oldest_finished >= RECORD_WITHIN_SECONDS)

    def write_results(self, *, claim_successors: bool) -> None:
        if claim_successors:
            limit = self.policy.concurrency - self.sending.held
            claimed, self.capped = record_and_claim(self.finished, self.policy, now=self.now(), counts=self.counts,
                                                    limit=limit)
            self.backlog = len(claimed) == limit
            self.send(claimed)
        else:
            record(self.finished, self.policy, now=self.now(), counts=self.counts)
        self.finished = []

    def time_to_look(self, free: int) -> bool:
        """Attempts are in flight, a slot is free, and the last look is LOOK_EVERY_SECONDS old."""
        return bool(self.sending.held) and free > 0 and time.monotonic() - self.last_look >= LOOK_EVERY_SECONDS

    def claim_if_wanted(self) -> None:
        """Claim to refill slots while the backlog lasts; once a claim came back short, claim again
        only when everything has finished (a last look for newly due work) or at the next look.
        Each claim is a transaction: claiming into an empty backlog cost 2 of 4 per event."""
        free = self.free_slots()
        looking = self.time_to_look(free)
        idle = not self.sending.held and not self.finished
        if looking or (self.claim_more and (idle or (self.backlog and free >= self.half))):
            self.claim(free, looking=looking)

    def claim(self, free: int, *, looking: bool) -> None:
        if looking:
            outbox.relay(now=self.now(), grace=dt.timedelta(0))
            self.claim_more = True          # the look may have made new deliveries due
        self.last_look = time.monotonic()
        claimed, self.capped = delivery_claim.claim_for_run(self.policy, now=self.now(), limit=free)
        self.backlog = len(claimed) == free
        self.send(claimed)

    def leave_the_rest_to_a_finisher(self) -> None:
        """Time is up. Waiting here for slow attempts (up to their 10 s deadline) would hold back
        the jobs queued behind this run, the fan-out of other stores' new events among them: a
        finisher thread records those attempts when they end instead."""
        if self.finished:
            record(self.finished, self.policy, now=self.now(), counts=self.counts)
        _finish_later(self.sending.all_started(), self.policy, now=self.now, leases=list(self.leases.values()))
        self.handed_over = True

    def wait_for_attempts(self) -> None:
        """Until an attempt finishes, a result is due to be written, or it is time to look."""
        wakes = [self.oldest_finished + RECORD_WITHIN_SECONDS] if self.finished else []
        if self.free_slots() > 0:
            wakes.append(self.last_look + LOOK_EVERY_SECONDS)
        for outcome in self.sending.wait(min(wakes) if wakes else None):
            if not self.finished:
                self.oldest_finished = time.monotonic()
            self.finished.append(outcome)


def _finish_later(futures: list, policy: DeliveryPolicy, *, now, leases: list) -> None:
    """Record the results of attempts still in flight once they end (each by its deadline), on a
    thread of its own with its own database connection. Not a daemon: a worker that exits waits
    for it, so these results are not lost to a lapsed claim. Their claims are renewed until then."""
    def finish():
        try:
            outcomes = [future.result() for future in futures]
            with db.connection_context():
                record(outcomes, policy, now=now(), counts=RunCounts())
        finally:
            for lease in leases:
                lease.stop()
    threading.Thread(target=finish, name="webhook-finisher").start()
