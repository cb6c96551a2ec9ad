"""A delivery run's results (docs/webhooks.md#what-a-delivery-looks-like): each attempt's row, the delivery's new
state (succeeded, due again on the retry schedule, or given up) and its endpoint's health, written
only where the run's claim still holds, so a result whose claim lapsed (another worker took the
delivery over) is dropped rather than written twice.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import dataclasses
import datetime as dt
import logging
import secrets

import peewee as pw

from core import ids
from infra import database, metrics
from infra.locks import write_transaction
from models.base import db, replace_connection
from models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from services.mail import notices
from services.webhooks import delivery_claim
from services.webhooks.delivery_policy import DeliveryPolicy
from services.webhooks.webhook_sending import Outcome, Work

log = logging.getLogger("tender.webhooks")

DISABLE_AFTER = dt.timedelta(days=3)


@dataclass
class RunCounts:
    succeeded: int = 0
    failed_attempts: int = 0
    given_up: int = 0
    outcomes: list = field(default_factory=list, repr=False)


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
            claimed = delivery_claim.claim_deliveries_in_transaction(token, policy.caps, now=now, limit=limit)
    except Exception:
        log.warning("results and claim not written together; writing the results on their own", exc_info=True)
        record(outcomes, policy, now=now, counts=counts)
        return delivery_claim.claim_for_run(policy, now=now, limit=limit)
    _recorded(written, counts)
    return delivery_claim.work_of(claimed.rows, token), claimed.more_due


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
        _disable(endpoint_id, "the endpoint answered 410 Gone", now=now)
    elif any(result.ok for result in results):
        if failing_since is not None:
            WebhookEndpoint.update(failing_since=None).where(where).execute()
    elif failing_since is None:
        WebhookEndpoint.update(failing_since=now).where(where & WebhookEndpoint.failing_since.is_null()).execute()
    elif now - failing_since >= DISABLE_AFTER:
        _disable(endpoint_id, "every delivery failed for 3 days", now=now)


def _disable(endpoint_id, reason: str, *, now: dt.datetime) -> None:
    """Disable the endpoint, and tell its store by mail in the same transaction (once: only the
    write that finds it enabled does)."""
    if WebhookEndpoint.update(enabled=False, disabled_reason=reason, updated_at=now).where(
            (WebhookEndpoint.id == endpoint_id) & WebhookEndpoint.enabled).execute():
        notices.endpoint_disabled(endpoint_id, reason, now=now)
