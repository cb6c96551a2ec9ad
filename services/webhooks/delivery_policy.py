"""What a delivery run may do (docs/webhooks.md#fairness, #what-a-delivery-looks-like): how many attempts it keeps in
flight, what one endpoint and one store may hold of them (the caps a claim applies:
delivery_claim.py), how long a claim lasts, and when a failed delivery is tried again.

A claim lasts RENEWED_CLAIM_SECONDS where the run renews it every second while it holds it
(PostgreSQL: infra/heartbeats.py), so a dead worker's deliveries are claimed again seconds after
it died; elsewhere (SQLite, one process) it lasts `claim_seconds`, longer than any attempt.
"""
from __future__ import annotations

from dataclasses import dataclass
import datetime as dt
import random

from infra import heartbeats

JITTER = 0.10
STORE_SHARE = 4                 # a store's backlog holds at most 1/4 of a run's slots in flight,
STORE_SHARE_ALONE = 2           # 1/2 while no other store has a delivery due and its receivers are quick
STORE_SHARE_OF_NEW_EVENTS = 2   # with its new events' first attempts, at most 1/2

# An attempt in flight for longer than this makes its store's receivers slow: the store is back
# to its shared cap even while it is the only one with deliveries due.
QUICK_ATTEMPT = dt.timedelta(seconds=1)
RENEWED_CLAIM_SECONDS = heartbeats.RENEWED_LEASE_SECONDS


@dataclass(frozen=True)
class DeliveryCaps:
    """What one claim may take: attempts in flight at once per target (an endpoint; a store's
    legacy callbacks count as one target) and per store, across every worker, and the lease.
    `per_store_alone`: a store's cap while no other store has a delivery due and none of its
    attempts in flight has lasted QUICK_ATTEMPT (a backlog then uses the slots nobody else wants,
    and is back to `per_store` as soon as anyone else's delivery is due or its receivers slow).
    `all_stores`: what the caps of the stores being served (with deliveries due or in flight) add
    up to at most. Past `all_stores // per_store` of them, each one's cap shrinks to an even part
    of it (never below one attempt), so however many stores' receivers hang, a run keeps slots
    free for a store that has a new event (None: caps never shrink)."""
    per_target: int
    per_store: int
    lease_seconds: int
    per_store_alone: int | None = None
    all_stores: int | None = None


@dataclass(frozen=True)
class DeliveryPolicy:
    retry_schedule: tuple[int, ...]
    timeout_seconds: int
    claim_seconds: int
    concurrency: int
    allow_private: bool
    max_in_flight_per_endpoint: int = 4
    ca_bundle: str | None = None        # tests with their own CA only; None trusts the public CAs
    renewed: bool = False               # runs renew their claims (heartbeats), so the lease is short

    @property
    def lease_seconds(self) -> int:
        return min(self.claim_seconds, RENEWED_CLAIM_SECONDS) if self.renewed else self.claim_seconds

    @property
    def per_store(self) -> int:
        """A quarter of a run's slots, never fewer than one endpoint's cap."""
        return max(self.max_in_flight_per_endpoint, self.concurrency // STORE_SHARE)

    @property
    def all_stores(self) -> int:
        """Every slot of a run but one store's cap: the reserve a store with a new event finds
        free, however many stores' receivers hang (4 such stores held all 32 slots)."""
        return max(self.per_store, self.concurrency - self.per_store)

    @property
    def caps(self) -> DeliveryCaps:
        """A store holds at most a quarter of a run's slots, less once more than three stores are
        being served; half while it is the only store with deliveries due and its attempts are quick."""
        alone = max(self.per_store, self.concurrency // STORE_SHARE_ALONE)
        return DeliveryCaps(self.max_in_flight_per_endpoint, self.per_store, self.lease_seconds, alone,
                            self.all_stores)

    @property
    def first_attempt_caps(self) -> DeliveryCaps:
        """A fan-out's first attempts may take their store to half a run's slots, so one new event
        reaches a store's 16 endpoints at once; its backlog never takes it past `caps`."""
        per_store = max(self.max_in_flight_per_endpoint, self.concurrency // STORE_SHARE_OF_NEW_EVENTS)
        return DeliveryCaps(self.max_in_flight_per_endpoint, per_store, self.lease_seconds,
                            all_stores=self.all_stores)

    @classmethod
    def from_settings(cls, settings) -> "DeliveryPolicy":
        return cls(settings.webhook_retry_schedule, settings.webhook_timeout_seconds,
                   settings.webhook_claim_seconds, settings.webhook_concurrency,
                   settings.allow_private_webhook_urls, settings.webhook_max_in_flight_per_endpoint,
                   renewed=heartbeats.renewing())

    def next_attempt_at(self, attempts_made: int, now: dt.datetime) -> dt.datetime | None:
        """When to try again after `attempts_made` failed attempts; None when out of retries."""
        if attempts_made > len(self.retry_schedule):
            return None
        delay = self.retry_schedule[attempts_made - 1]
        return now + dt.timedelta(seconds=delay * (1 + random.uniform(0, JITTER)))
