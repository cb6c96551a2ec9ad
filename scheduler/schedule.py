"""The schedule, free of import side effects: shared by `rq cron` (scheduler/cron.py) and the
embedded scheduler thread (scheduler/embedded.py)."""
from __future__ import annotations

from jobs.chain import poll_deposits, poll_refunds
from jobs.mail import send_due as send_due_mail, sweep_notices as sweep_mail_notices
from jobs.maintenance import (purge_expired_idempotency_keys, refresh_exchange_rates, sweep_expired_invoices,
                              sweep_expired_refunds)
from jobs.settlement import poll_settlements
from jobs.webhooks import relay_outbox
from services.engine import exchange_rates

# Generous timeouts: a polling sweep stops claiming new work after ~20 s (services/engine/polling.py).
JOB_TIMEOUT = 120
OUTBOX_RELAY_SECONDS = 5
IDEMPOTENCY_PURGE_SECONDS = 3600
MAIL_SWEEP_SECONDS = 5           # mail whose nudge was lost or whose worker died, and retries come due (docs/email.md)
MAIL_NOTICES_SECONDS = 60        # an endpoint failing for an hour, a refund's funding about to expire


def sweeps(settings) -> list[dict]:
    """The schedule as `rq.cron.register` keyword arguments.

    A payment-engine tick that waited in its queue longer than two intervals is dropped (`ttl`):
    a later tick does the same work, so a busy worker never builds a backlog of stale ticks.
    """
    def sweep(func, queue_name, interval):
        return {"func": func, "queue_name": queue_name, "interval": interval, "job_timeout": JOB_TIMEOUT,
                "result_ttl": 0, "failure_ttl": 86400, "ttl": 2 * interval + 5}

    return [
        # Outbox relay (docs/operations.md: the maintenance queue): events whose fan-out nudge was lost are
        # dispatched within seconds, and due webhook retries get a delivery run on the webhooks queue.
        {"func": relay_outbox, "queue_name": "maintenance", "interval": OUTBOX_RELAY_SECONDS, "result_ttl": 0,
         "failure_ttl": 3600},
        # Polling ticks at the hot pace; each invoice's poll state (`next_poll_at`) says whether it is due
        # (docs/payment-engine.md#polling-batches-claims-backoff), so idle invoices are not read more often.
        sweep(poll_deposits, "chain", min(settings.hot_poll_interval_seconds, settings.chain_poll_interval_seconds)),
        sweep(poll_settlements, "settlement",
              min(settings.hot_poll_interval_seconds, settings.settlement_poll_interval_seconds)),
        sweep(poll_refunds, "chain", min(settings.hot_poll_interval_seconds, settings.chain_poll_interval_seconds)),
        sweep(sweep_expired_invoices, "maintenance", settings.expiry_sweep_interval_seconds),
        sweep(sweep_expired_refunds, "maintenance", settings.expiry_sweep_interval_seconds),
        sweep(purge_expired_idempotency_keys, "maintenance", IDEMPOTENCY_PURGE_SECONDS),
        sweep(send_due_mail, "mail", MAIL_SWEEP_SECONDS),
        sweep(sweep_mail_notices, "maintenance", MAIL_NOTICES_SECONDS),
    ] + ([sweep(refresh_exchange_rates, "maintenance", exchange_rates.REFRESH_SECONDS)]
         if any(name != exchange_rates.SANDBOX for name in settings.fx_providers) else [])
