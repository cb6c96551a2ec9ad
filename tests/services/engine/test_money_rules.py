"""Money is never left unrecorded (docs/payment-engine.md): cancel crossing a deposit, top-up,
overpayment, settlement in delivered units, untrusted provider numbers, polling that ends, quote
commit time left, a bounded expiry sweep. Real database and queue; the sandbox provider."""
import datetime as dt
from decimal import Decimal
import threading

import pytest

import jobs
from core.clock import utcnow
from jobs import chain, maintenance, settlement
from models.base import db
from models.events import Event
from models.invoices import Invoice
from models.polls import PollState
from models.transactions import Transaction
from providers import base
from providers.base import DepositStatus, ProviderUnavailable
from services.engine import expiry, payments, polling
from tests import factories
from tests.payflow import event_types, make_due, next_poll_of, reload
from tests.support.statement_oracle import roll_up_checked_after_each_test

# Every payment and refund path here keeps the settlement statement's roll-up (services/settlement_days.py).
roll_up_checked = pytest.fixture(autouse=True)(roll_up_checked_after_each_test)


@pytest.fixture
def runtime(app, settings):
    jobs.use_runtime(settings)
    yield settings


def _pay(client, auth, invoice, **body):
    response = client.post(f"/v1/test_helpers/invoices/{invoice.public_id}/pay", json=body, headers=auth)
    assert response.status_code == 202, response.json


def _poll(invoice, times=4):
    for _ in range(times):
        make_due(invoice)
        chain.poll_deposits()
        make_due(invoice)
        settlement.poll_settlements()


def _transactions(invoice, type_):
    with db.connection_context():
        return list(Transaction.select().where((Transaction.invoice == invoice.id) & (Transaction.type == type_)))


def test_cancel_of_an_invoice_whose_deposit_the_provider_knows_is_409(runtime, client, auth, store):
    invoice = factories.make_invoice(store)
    _pay(client, auth, invoice)                                   # deposit made, never polled yet
    response = client.post(f"/v1/invoices/{invoice.public_id}/cancel", headers=auth)
    assert (response.status_code, response.json["error"]["code"]) == (409, "invoice_not_cancellable")
    assert reload(invoice).deposit_seen_at is not None            # what the provider said is recorded
    _poll(invoice)
    assert event_types(invoice)[-2:] == ["invoice.paid", "invoice.settled"]


def test_cancel_when_the_provider_cannot_answer_is_503_with_retry_after(runtime, client, auth, store, monkeypatch):
    invoice = factories.make_invoice(store, status="awaiting_payment", deposit_address="addr-down",
                                     quoted_at=utcnow())

    def down(*args, **kwargs):
        raise ProviderUnavailable("connection refused")
    monkeypatch.setattr("providers.sandbox.SandboxProvider.deposit_status", down)
    response = client.post(f"/v1/invoices/{invoice.public_id}/cancel", headers=auth)
    assert (response.status_code, response.json["error"]["code"]) == (503, "provider_unavailable")
    assert response.headers["Retry-After"] and reload(invoice).status == "awaiting_payment"


def test_a_deposit_that_crossed_the_cancel_pays_the_cancelled_invoice(runtime, client, auth, store):
    invoice = factories.make_invoice(store)
    _pay(client, auth, invoice, outcome="failed")                 # commits the address (helper)
    with db.connection_context():                                 # the buyer pays right after the cancel
        from models.sandbox import SandboxDeposit
        SandboxDeposit.update(deposited_at=None, outcome=None).execute()
    assert client.post(f"/v1/invoices/{invoice.public_id}/cancel", headers=auth).status_code == 200
    _pay(client, auth, invoice)
    _poll(invoice)
    paid = reload(invoice)
    assert (paid.status, paid.swap_status) == ("paid", None)
    with db.connection_context():
        event = Event.get((Event.invoice == invoice.id) & (Event.type == "invoice.paid"))
    assert event.payload["previous_status"] == "cancelled" and _transactions(invoice, "payment_origin")


def test_a_refunded_crossing_deposit_is_recorded_on_the_cancelled_invoice(runtime, client, auth, store):
    invoice = factories.make_invoice(store)
    _pay(client, auth, invoice, outcome="refunded")
    with db.connection_context():
        from models.sandbox import SandboxDeposit
        SandboxDeposit.update(deposited_at=None, outcome=None).execute()
    assert client.post(f"/v1/invoices/{invoice.public_id}/cancel", headers=auth).status_code == 200
    refunded = DepositStatus(status=base.REFUNDED, amount_in=Decimal("10.05"), refunded_amount=Decimal("10.05"),
                             origin_tx_hashes=("o",), refund_tx_hashes=("r",))
    with db.connection_context():
        for _ in range(2):                                        # a repeated poll records nothing twice
            payments.apply_deposit_status(reload(invoice), refunded, now=utcnow())
    assert reload(invoice).status == "cancelled" and len(_transactions(invoice, "refund")) == 1
    assert next_poll_of(invoice) is None or polling.next_poll_at(
        reload(invoice), now=utcnow(), base_seconds=10) is None   # the provider's final word


def test_overpayment_records_the_refunded_excess_and_pays_net(runtime, client, auth, store):
    invoice = factories.make_invoice(store, amount=Decimal("10.00"))
    _pay(client, auth, invoice, outcome="overpaid")
    _poll(invoice)
    settled = reload(invoice)
    assert (settled.status, settled.swap_status) == ("paid", None)
    assert settled.paid_amount == Decimal("10.05")               # what is due (fee included), not 1.2x
    assert len(_transactions(invoice, "refund")) == 1


def test_top_up_moves_underpaid_to_paid_with_one_invoice_paid(runtime, client, auth, store):
    invoice = factories.make_invoice(store)
    _pay(client, auth, invoice, outcome="underpaid")
    _poll(invoice, 2)
    assert reload(invoice).status == "underpaid"
    _pay(client, auth, invoice, outcome="success")                # the buyer sends the rest
    _poll(invoice)
    assert (reload(invoice).status, reload(invoice).swap_status) == ("paid", None)
    assert event_types(invoice).count("invoice.paid") == 1
    with db.connection_context():
        event = Event.get((Event.invoice == invoice.id) & (Event.type == "invoice.paid"))
    assert event.payload["previous_status"] == "underpaid"


def _processing(store, **over):
    now = utcnow()
    return factories.make_invoice(store, status="paid", swap_status="processing", deposit_address="a",
                                  paid_amount=Decimal("100.00"), amount=Decimal("100.00"),
                                  amount_due=Decimal("100.50"), deposit_seen_at=now, paid_at=now, **over)


def test_settlement_compares_delivered_units_not_the_usd_valuation(runtime, store):
    invoice = _processing(store)
    status = DepositStatus(status=base.SUCCESS, amount_in=Decimal("100.5"), amount_out=Decimal("100"),
                           amount_out_usd=Decimal("99.99"), origin_tx_hashes=("o",), destination_tx_hashes=("d",))
    with db.connection_context():
        payments.apply_deposit_status(reload(invoice), status, now=utcnow())
    settled = reload(invoice)
    assert (settled.swap_status, settled.review_reason, settled.received_amount) == (None, None, Decimal("100"))


@pytest.mark.parametrize("amount_in, reason", [(Decimal("NaN"), "invalid_amount"), (Decimal("-5"), "invalid_amount"),
                                               (Decimal("1e30"), "invalid_amount"), (None, "missing_amount")])
def test_untrusted_provider_numbers_hold_the_invoice_for_review(runtime, store, amount_in, reason):
    invoice = factories.make_invoice(store, status="awaiting_payment", deposit_address="a", amount_due=Decimal("10"))
    with db.connection_context():
        payments.apply_deposit_status(reload(invoice), DepositStatus(status=base.PROCESSING, amount_in=amount_in),
                                      now=utcnow())
        held = reload(invoice)
        assert (held.status, held.paid_amount, held.review_reason) == ("awaiting_payment", None, reason)
        assert held in payments.stuck(now=utcnow())
    assert "invoice.paid" not in event_types(invoice)


def test_a_reported_zero_is_zero_not_the_full_amount(runtime, store):
    invoice = factories.make_invoice(store, status="awaiting_payment", deposit_address="a", amount_due=Decimal("10"))
    with db.connection_context():
        payments.apply_deposit_status(reload(invoice), DepositStatus(
            status=base.PROCESSING, amount_in=Decimal(0), amount_in_usd=Decimal(0)), now=utcnow())
    assert reload(invoice).paid_amount == Decimal("0")


@pytest.mark.parametrize("outcome, polls", [("success", 4), ("underpaid", 3), ("refunded", 4), ("failed", 4),
                                            ("overpaid", 4)])
def test_every_invoice_stops_being_polled(runtime, client, auth, store, outcome, polls):
    """Each outcome driven to its end, then past its window: the claim query never returns it again."""
    invoice = factories.make_invoice(store)
    _pay(client, auth, invoice, outcome=outcome)
    _poll(invoice, polls)
    later = utcnow() + dt.timedelta(days=2)                       # past deadline + 24 h, whatever the state
    with db.connection_context():
        current = reload(invoice)
        for phase in polling.PHASES:
            assert not PollState.select().where(polling.due(phase, later) & (PollState.invoice == invoice.id)).exists()
        assert polling.next_poll_at(current, now=later, base_seconds=10, hot_seconds=2) is None
        if outcome != "underpaid":                                 # the provider's final word ends it at once
            assert next_poll_of(invoice) is None, (outcome, current.status, current.provider_status)


def test_a_poll_that_learns_nothing_writes_nothing(runtime, client, auth, store):
    invoice = factories.make_invoice(store)
    _pay(client, auth, invoice, outcome="refunded")
    with db.connection_context():
        Invoice.update(status="expired").where(Invoice.id == invoice.id).execute()
    _poll(invoice, 3)
    before = reload(invoice)
    with db.connection_context():
        status = DepositStatus(status=base.REFUNDED, amount_in=Decimal("10.05"), refunded_amount=Decimal("10.05"),
                               origin_tx_hashes=("o",), refund_tx_hashes=("r",))
        payments.apply_deposit_status(before, status, now=utcnow())
        payments.apply_deposit_status(before, status, now=utcnow() + dt.timedelta(seconds=5))
    assert reload(invoice).updated_at == reload(invoice).updated_at
    after_first = reload(invoice).updated_at
    with db.connection_context():
        payments.apply_deposit_status(before, status, now=utcnow() + dt.timedelta(seconds=9))
    assert reload(invoice).updated_at == after_first


def test_quote_commit_with_too_little_time_left_is_400_invoice_expiring(runtime, client, store):
    now = utcnow()
    invoice = factories.make_invoice(store, now=now - dt.timedelta(minutes=59),
                                     expires_at=now + dt.timedelta(seconds=60))
    response = client.post(f"/v1/public/invoices/{invoice.public_id}/quote",
                           json={"origin_asset": "usdc.eth", "refund_to": "0x" + "1" * 40, "dry": False})
    assert (response.status_code, response.json["error"]["code"]) == (400, "invoice_expiring")
    assert reload(invoice).deposit_address is None


def test_expiry_sweep_goes_on_past_a_provider_outage(runtime, store, monkeypatch):
    now = utcnow()
    past = now - dt.timedelta(seconds=1)
    with_address = [factories.make_invoice(store, status="awaiting_payment", deposit_address=f"a{i}",
                                           expires_at=past) for i in range(5)]
    plain = [factories.make_invoice(store, expires_at=past + dt.timedelta(milliseconds=1)) for _ in range(3)]
    asked, answered, released = [], [], threading.Event()

    class Stalled:
        def deposit_status(self, address, memo=None):
            asked.append(address)
            released.wait(30)                                    # answers only once the sweep has returned
            answered.append(address)
            return DepositStatus(status=base.PENDING_DEPOSIT)

    try:
        with db.connection_context():
            assert expiry.expire_due(Stalled(), now=now, timeout_seconds=0.2) == 3
        # The sweep gave up on each stalled ask at its bound and went on: no answer was waited for
        # (counted, not timed: a loaded machine's seconds vary).
        assert answered == [] and len(asked) == expiry.PROVIDER_FAILURES_TO_PAUSE
    finally:
        released.set()
    assert {reload(i).status for i in with_address} == {"awaiting_payment"}   # never expired unasked
    assert {reload(i).status for i in plain} == {"expired"}


def test_a_poll_request_during_a_run_makes_it_claim_once_more(runtime, store, monkeypatch):
    late = factories.make_invoice(store, status="awaiting_payment", deposit_address="late",
                                  next_poll_at=utcnow() + dt.timedelta(minutes=5))
    first = factories.make_invoice(store, status="awaiting_payment", deposit_address="first",
                                   next_poll_at=utcnow() - dt.timedelta(seconds=1))
    seen = []

    class Provider:
        def deposit_status(self, address, memo=None):
            seen.append(address)
            if address == "first":                                # a payment arrives while this run polls
                with db.connection_context():
                    PollState.update(next_poll_at=utcnow()).where(PollState.invoice == late.id).execute()
                polling.request_poll("chain")
            return DepositStatus(status=base.PENDING_DEPOSIT)

    with db.connection_context():
        polling.poll_due("chain", Provider(), clock=utcnow, base_seconds=10, hot_seconds=2, batch_size=10,
                         concurrency=1)
    assert seen == ["first", "late"]


def test_provider_reads_are_counted_by_phase_and_temperature(runtime, store):
    """Operators (and bench/payflow.py) read how often the pollers ask the provider, hot against idle."""
    from infra import metrics
    from tests.support.prometheus import samples
    now = utcnow()
    factories.make_invoice(store, status="awaiting_payment", deposit_address="hot", quoted_at=now,
                           next_poll_at=now - dt.timedelta(seconds=1))
    for address in ("idle-1", "idle-2"):
        factories.make_invoice(store, status="awaiting_payment", deposit_address=address,
                               quoted_at=now - dt.timedelta(minutes=20), next_poll_at=now - dt.timedelta(seconds=1))

    class Provider:
        def deposit_status(self, address, memo=None):
            return DepositStatus(status=base.PENDING_DEPOSIT)

    with db.connection_context():
        assert polling.poll_due("chain", Provider(), clock=utcnow, base_seconds=10, hot_seconds=2, batch_size=10,
                                concurrency=1) == 3
    metrics.flush()
    counted = samples(metrics.render({}))
    assert counted['tender_provider_deposit_reads_total{phase="chain",temperature="hot"}'] == 1
    assert counted['tender_provider_deposit_reads_total{phase="chain",temperature="idle"}'] == 2
