"""Delivery outcomes and job runs reach GET /metrics."""
import re

import jobs.webhooks
from tests.support.prometheus import scrape
from tests.services.webhooks.conftest import pump
from tests.services.webhooks.test_delivery import create_invoice, make_endpoint


def test_jobs_and_webhook_delivery_outcomes_are_counted(client, auth, operator_app, receiver, policy, job_settings):
    receiver.script("/hook", [500])
    make_endpoint(client, auth, receiver.url("/hook"))
    create_invoice(client, auth)
    pump(policy)                 # first attempt fails (500), the retry (0 s) succeeds
    jobs.webhooks.relay_outbox()

    metrics = scrape(client)

    assert metrics['tender_webhook_delivery_attempts_total{outcome="failed"}'] == 1
    assert metrics['tender_webhook_delivery_attempts_total{outcome="succeeded"}'] == 1
    assert metrics['tender_jobs_total{job="relay_outbox",outcome="succeeded"}'] == 1
    assert any(re.match(r'tender_job_duration_seconds_count\{job="relay_outbox"\}', key) for key in metrics)
