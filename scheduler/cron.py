"""rq cron configuration: `rq cron scheduler/cron.py`, run by exactly one Procfile process.

Sweeps, not timers: each registered job finds what is due in the database, so a missed or
doubled tick is harmless."""
from rq import cron

from jobs.webhooks import relay_outbox

# Outbox relay (DECISIONS §1: the maintenance queue): events whose fan-out nudge was lost are
# dispatched within seconds, and due webhook retries get a delivery run on the webhooks queue.
cron.register(relay_outbox, queue_name="maintenance", interval=5, result_ttl=0, failure_ttl=3600)
