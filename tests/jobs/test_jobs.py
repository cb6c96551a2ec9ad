"""Job functions called directly, one SimpleWorker burst per queue, the schedule, the embedded
runner, the expiry sweep and the `invoices stuck` command."""
import datetime as dt
import importlib
import json
import time

import pytest
from rq import SimpleWorker

import jobs
from core.clock import utcnow
from infra import queues
from jobs import chain, maintenance, settlement
from models.base import db
from models.invoices import Invoice
from providers.sandbox import SandboxProvider
from services.engine import expiry, polling
from services.webhooks import outbox
from tests import factories
from tests.payflow import event_types, make_due, reload


@pytest.fixture
def runtime(app, settings):
    jobs.use_runtime(settings)
    yield settings


@pytest.mark.parametrize("path", [outbox.FAN_OUT_JOB, outbox.DELIVER_JOB, *polling.JOBS.values()])
def test_every_job_the_services_nudge_by_path_is_a_job_function(path):
    # The services name the jobs they nudge by dotted path, as RQ enqueues them, because the domain
    # never imports the job layer above it; a renamed job function fails here, not in production.
    module, name = path.rsplit(".", 1)
    assert module.startswith("jobs.") and callable(getattr(importlib.import_module(module), name))


def _pay(client, auth, invoice, **body):
    assert client.post(f"/v1/test_helpers/invoices/{invoice.public_id}/pay", json=body,
                       headers=auth).status_code == 202


def test_job_functions_move_an_invoice_to_settled(runtime, client, auth, store):
    invoice = factories.make_invoice(store)
    _pay(client, auth, invoice)
    for _ in range(3):                                      # KNOWN_DEPOSIT_TX, PROCESSING
        make_due(invoice)
        chain.poll_deposits()
    assert (reload(invoice).status, reload(invoice).swap_status) == ("paid", "processing")
    make_due(invoice)
    assert settlement.poll_settlements() == 1
    assert reload(invoice).settled_at is not None
    assert event_types(invoice)[-2:] == ["invoice.paid", "invoice.settled"]


@pytest.mark.parametrize("queue_name, func", [("chain", chain.poll_deposits),
                                              ("settlement", settlement.poll_settlements),
                                              ("maintenance", maintenance.sweep_expired_invoices)])
def test_one_simple_worker_burst_per_queue(runtime, queue_name, func):
    queue = queues.queue(queue_name)
    job = queue.enqueue(func, result_ttl=60)
    worker = SimpleWorker([queue], connection=queues.redis())
    assert worker.work(burst=True)
    job.refresh()
    assert job.get_status() == "finished" and job.return_value() == 0


def test_expiry_sweep_expires_due_open_invoices_only(runtime, store):
    now = utcnow()
    past = now - dt.timedelta(seconds=1)
    due = [factories.make_invoice(store, now=now - dt.timedelta(hours=1), expires_at=past, status=s)
           for s in ("pending", "quoted")]
    not_yet = factories.make_invoice(store, expires_at=now + dt.timedelta(minutes=5))
    paid = factories.make_invoice(store, expires_at=past, status="paid")
    with db.connection_context():
        assert expiry.expire_due(SandboxProvider(), now=now, batch_size=1) == 2   # batches of one
    assert [reload(i).status for i in due] == ["expired", "expired"]
    assert (reload(not_yet).status, reload(paid).status) == ("pending", "paid")
    assert event_types(due[0])[-1] == "invoice.expired"


def test_expiry_never_races_a_payment(runtime, client, auth, store):
    invoice = factories.make_invoice(store)
    _pay(client, auth, invoice)                             # deposit recorded, not polled yet
    with db.connection_context():
        Invoice.update(expires_at=utcnow() - dt.timedelta(seconds=1)).where(Invoice.id == invoice.id).execute()
    maintenance.sweep_expired_invoices()
    assert reload(invoice).status == "awaiting_payment" and reload(invoice).deposit_seen_at is not None


def test_a_deposit_made_in_time_but_seen_late_pays_an_expired_invoice(runtime, client, auth, store):
    invoice = factories.make_invoice(store)
    _pay(client, auth, invoice)
    with db.connection_context():        # expired by an earlier sweep that could not see the deposit yet
        Invoice.update(status="expired").where(Invoice.id == invoice.id).execute()
    for _ in range(3):
        make_due(invoice)
        chain.poll_deposits()
    late = reload(invoice)
    assert late.status == "paid" and late.paid_at > late.created_at


def test_a_late_deposit_is_refunded_and_recorded_on_the_expired_invoice(runtime, client, auth, store):
    invoice = factories.make_invoice(store)
    client.post(f"/v1/public/invoices/{invoice.public_id}/quote",
                json={"origin_asset": "usdc.eth", "refund_to": "0xbuyer", "dry": False})
    with db.connection_context():
        Invoice.update(expires_at=utcnow() - dt.timedelta(seconds=1)).where(Invoice.id == invoice.id).execute()
        from models.sandbox import SandboxDeposit

        SandboxDeposit.update(deadline=utcnow() - dt.timedelta(seconds=1)).execute()
    maintenance.sweep_expired_invoices()
    assert reload(invoice).status == "expired"
    _pay(client, auth, invoice)                             # the buyer pays after the deadline
    for _ in range(3):
        make_due(invoice)
        chain.poll_deposits()
    refunds = client.get("/v1/transactions?type=refund", headers=auth).json["data"]
    assert reload(invoice).status == "expired" and [r["invoice_id"] for r in refunds] == [invoice.public_id]
    assert event_types(invoice)[-1] == "invoice.expired"


def test_polling_backs_off_as_an_unpaid_invoice_ages(store):
    now = utcnow()
    young = factories.make_invoice(store, status="awaiting_payment", quoted_at=now, deposit_address="a1")
    old = factories.make_invoice(store, status="awaiting_payment", quoted_at=now - dt.timedelta(hours=2),
                                 deposit_address="a2")
    forgotten = factories.make_invoice(store, status="expired", expires_at=now - dt.timedelta(hours=25),
                                       deposit_address="a3")
    assert polling.next_poll_at(reload(young), now=now, base_seconds=10) == now + dt.timedelta(seconds=10)
    assert polling.next_poll_at(reload(old), now=now, base_seconds=10) == now + dt.timedelta(seconds=120)
    assert polling.next_poll_at(reload(forgotten), now=now, base_seconds=10) is None
    # Adaptive: a quote committed minutes ago is hot; an old unpaid one keeps its back-off.
    assert polling.next_poll_at(reload(young), now=now, base_seconds=10, hot_seconds=2) == now + dt.timedelta(seconds=2)
    assert polling.next_poll_at(reload(old), now=now, base_seconds=10, hot_seconds=2) == now + dt.timedelta(seconds=120)


def test_rq_cron_config_registers_the_sweeps(runtime, monkeypatch):
    import importlib
    import sys

    from rq import cron

    monkeypatch.setenv("CHAIN_POLL_INTERVAL_SECONDS", "7")
    monkeypatch.setenv("HOT_POLL_INTERVAL_SECONDS", "30")     # the tick is the faster of the two
    scheduler = cron.CronScheduler(connection=queues.redis())
    sys.modules.pop("scheduler.cron", None)
    scheduler.load_config_from_file("scheduler/cron.py")
    by_queue = {job.queue_name: job for job in scheduler.get_jobs()}
    assert set(by_queue) == {"chain", "settlement", "maintenance", "mail"} and by_queue["chain"].interval == 7
    assert {job.func.__name__ for job in scheduler.get_jobs()} >= {
        "relay_outbox", "sweep_expired_invoices", "purge_expired_idempotency_keys", "send_due", "sweep_notices"}
    scheduler.enqueue_jobs()
    # The job the cron enqueued is readable by our workers' queues (one serializer everywhere).
    job = queues.queue("chain").jobs[0]
    assert job.func_name == "jobs.chain.poll_deposits"
    importlib.import_module("scheduler.cron")


def test_embedded_jobs_run_the_whole_flow(runtime, client, auth, store, monkeypatch):
    import dataclasses

    from scheduler import embedded

    fast = dataclasses.replace(runtime, chain_poll_interval_seconds=1, settlement_poll_interval_seconds=1,
                               expiry_sweep_interval_seconds=1)
    from models.mail import Mail

    def receipt():
        with db.connection_context():
            return Mail.get_or_none((Mail.kind == "receipt") & (Mail.recipient == "buyer@example.com"))

    invoice = factories.make_invoice(store, customer_email="buyer@example.com")
    _pay(client, auth, invoice)
    runner = embedded.start(fast, tick_seconds=0.1)
    try:
        deadline = time.monotonic() + 120      # a bound, not a goal: a loaded machine took over 30 s
        while time.monotonic() < deadline and (reload(invoice).settled_at is None
                                               or getattr(receipt(), "status", None) != "logged"):
            time.sleep(0.1)
    finally:
        runner.stop()
        jobs.use_runtime(runtime)
    assert reload(invoice).settled_at is not None
    assert receipt().status == "logged"          # no SMTP_URL: the receipt is in the log, and kept


def test_the_thread_worker_subscribes_to_no_rq_commands(runtime, monkeypatch):
    """Each `work()` of rq's worker started a pub/sub thread that could outlive it on a busy machine and
    race the next worker's over a pooled connection (scheduler/embedded.py); a thread worker starts none."""
    import redis.client

    from scheduler import embedded

    started = []
    monkeypatch.setattr(redis.client.PubSub, "run_in_thread", lambda pubsub, *args, **kwargs: started.append(pubsub))
    embedded.ThreadWorker([queues.queue("webhooks")], connection=queues.redis()).work(burst=True)
    assert started == []


def test_invoices_stuck_lists_late_and_held_settlements(app, store):
    now = utcnow()
    late = factories.make_invoice(store, status="paid", swap_status="processing",
                                  expires_at=now - dt.timedelta(hours=2))
    held = factories.make_invoice(store, status="paid", swap_status="processing", review_reason="short_delivery")
    factories.make_invoice(store, status="paid", swap_status="processing")       # still in time
    result = app.test_cli_runner().invoke(args=["invoices", "stuck", "--json"])
    assert result.exit_code == 0, result.output
    assert {row["id"] for row in json.loads(result.output)} == {late.public_id, held.public_id}
