"""Merchant refunds through the API and the real pollers (docs/refunds.md): the whole flow, and a
test per money rule."""
from decimal import Decimal

import pytest

from models.base import db
from models.events import Event
from models.refunds import Refund
from tests import factories
from tests.payflow import poll_until_quiet, run_pipeline
from tests.support.statement_oracle import roll_up_checked_after_each_test

# Every payment and refund path here keeps the settlement statement's roll-up (services/settlement_days.py).
roll_up_checked = pytest.fixture(autouse=True)(roll_up_checked_after_each_test)


def paid_invoice(client, auth, amount="40.00", **pay):
    created = client.post("/v1/invoices", json={"amount": amount, "currency": "USD"}, headers=auth).json
    assert client.post(f"/v1/test_helpers/invoices/{created['id']}/pay", json=pay, headers=auth).status_code == 202
    run_pipeline()
    invoice = client.get(f"/v1/invoices/{created['id']}", headers=auth).json
    assert invoice["status"] == "paid"
    return invoice


def refund(client, auth, invoice_id, amount, **body):
    return client.post(f"/v1/invoices/{invoice_id}/refunds", json={"amount": amount, **body}, headers=auth)


def fund(client, auth, refund_id, **body):
    response = client.post(f"/v1/test_helpers/refunds/{refund_id}/fund", json=body, headers=auth)
    assert response.status_code == 202, response.json
    poll_until_quiet("refunds")
    return client.get(f"/v1/refunds/{refund_id}", headers=auth).json


def test_pay_refund_part_then_the_rest_and_the_invoice_is_refunded(client, auth):
    invoice = paid_invoice(client, auth)
    first = refund(client, auth, invoice["id"], "15.00", reason="returned item")
    assert first.status_code == 201, first.json
    body = first.json
    assert body["status"] == "awaiting_funds" and body["amount"] == "15.00" and body["currency"] == "USD"
    assert body["asset"] == "usdc.eth" and body["refund_to"].startswith("0x")     # the buyer's checkout values
    assert body["funding"]["asset"] == "usdc.near" and body["funding"]["amount"] == "15.00"
    assert body["funding"]["deposit_address"] and body["funding"]["expires_at"]
    assert Decimal(body["estimated_amount_out"]) < Decimal("15")                  # the swap fee is the buyer's
    assert body["funding_url"].endswith(f"/fund/{body['id']}")

    done = fund(client, auth, body["id"])
    assert done["status"] == "succeeded" and done["transaction_hash"] and done["amount_out"]
    assert done["funding"]["received_amount"] == "15.00"
    partly = client.get(f"/v1/invoices/{invoice['id']}", headers=auth).json
    assert partly["status"] == "paid" and partly["refunded_amount"] == "15.00"

    rest = refund(client, auth, invoice["id"], "25.00").json
    assert fund(client, auth, rest["id"])["status"] == "succeeded"
    final = client.get(f"/v1/invoices/{invoice['id']}", headers=auth).json
    assert final["status"] == "refunded" and final["refunded_amount"] == "40.00"

    moves = client.get(f"/v1/invoices/{invoice['id']}/transactions", headers=auth).json["data"]
    delivered = [t for t in moves if t["type"] == "refund"]
    assert sorted(t["transaction_hash"] for t in delivered) == sorted([done["transaction_hash"],
                                                                       fund_hash(client, auth, rest["id"])])
    assert all(t["token"] == "usdc.eth" and t["status"] == "confirmed" for t in delivered)
    with db.connection_context():
        kinds = [e.type for e in Event.select().where(Event.invoice == reload_id(invoice["id"]))
                 .order_by(Event.created_at, Event.id)]
    assert kinds.count("refund.created") == 2 and kinds.count("refund.succeeded") == 2
    assert kinds.count("invoice.refunded") == 1
    listed = client.get(f"/v1/invoices/{invoice['id']}/refunds", headers=auth).json
    assert [r["id"] for r in listed["data"]] == [rest["id"], body["id"]] and listed["has_more"] is False


def fund_hash(client, auth, refund_id):
    return client.get(f"/v1/refunds/{refund_id}", headers=auth).json["transaction_hash"]


def reload_id(public_id):
    from models.invoices import Invoice

    with db.connection_context():
        return Invoice.get(Invoice.public_id == public_id).id


def test_refunds_never_add_up_to_more_than_received(client, auth):
    invoice = paid_invoice(client, auth, amount="10.00")
    assert refund(client, auth, invoice["id"], "6.00").status_code == 201
    over = refund(client, auth, invoice["id"], "4.01")
    assert over.status_code == 400 and over.json["error"]["code"] == "refund_exceeds_refundable"
    assert over.json["error"]["param"] == "amount"
    assert refund(client, auth, invoice["id"], "4.00").status_code == 201
    assert refund(client, auth, invoice["id"], "0.01").json["error"]["code"] == "refund_exceeds_refundable"


def past_deadline(refund_id: str) -> None:
    """The refund's funding deadline passed, for Tender and for the sandbox provider alike."""
    import datetime as dt

    from core.clock import utcnow
    from models.sandbox import SandboxDeposit

    past = utcnow() - dt.timedelta(minutes=1)
    with db.connection_context():
        address = Refund.get(Refund.public_id == refund_id).deposit_address
        Refund.update(expires_at=past).where(Refund.public_id == refund_id).execute()
        SandboxDeposit.update(deadline=past).where(SandboxDeposit.deposit_address == address).execute()


def close_funding_windows() -> int:
    """The expiry sweep, as the scheduler runs it."""
    from core.clock import utcnow
    from providers.sandbox import SandboxProvider
    from services.engine import refunds as refund_service

    with db.connection_context():
        return refund_service.expire_due(SandboxProvider(), now=utcnow())


def test_a_cancelled_or_failed_refund_frees_its_amount(client, auth):
    """A cancelled one once its funding window closed: until then funding may still cross the
    cancel, and the provider would deliver it."""
    invoice = paid_invoice(client, auth, amount="10.00")
    first = refund(client, auth, invoice["id"], "10.00").json
    cancelled = client.post(f"/v1/refunds/{first['id']}/cancel", headers=auth)
    assert cancelled.status_code == 200 and cancelled.json["status"] == "cancelled"
    assert refund(client, auth, invoice["id"], "10.00").json["error"]["code"] == "refund_exceeds_refundable"
    past_deadline(first["id"])
    close_funding_windows()
    second = refund(client, auth, invoice["id"], "10.00").json
    failed = fund(client, auth, second["id"], outcome="failed")
    assert failed["status"] == "failed" and failed["failure_reason"] == "funding_returned"
    assert failed["funding"]["returned_amount"] == "10.00" and failed["funding"]["return_transaction_hash"]
    third = refund(client, auth, invoice["id"], "10.00")
    assert third.status_code == 201
    assert client.get(f"/v1/invoices/{invoice['id']}", headers=auth).json["refunded_amount"] is None


def test_short_funding_is_recorded_then_returned(client, auth):
    invoice = paid_invoice(client, auth, amount="10.00")
    created = refund(client, auth, invoice["id"], "10.00").json
    short = fund(client, auth, created["id"], outcome="short")
    assert short["status"] == "failed" and short["funding"]["received_amount"] == "5.00"
    assert short["funding"]["returned_amount"] == "5.00" and short["funding"]["transaction_hash"]


def test_too_large_funding_is_recorded_with_the_excess_sent_back(client, auth):
    invoice = paid_invoice(client, auth, amount="10.00")
    created = refund(client, auth, invoice["id"], "10.00").json
    large = fund(client, auth, created["id"], amount="12")
    assert large["status"] == "succeeded" and large["funding"]["received_amount"] == "12.00"
    assert large["funding"]["returned_amount"] == "2.00"


def test_a_refund_is_only_for_a_paid_settled_invoice(client, auth, store):
    pending = client.post("/v1/invoices", json={"amount": "10.00"}, headers=auth).json
    response = refund(client, auth, pending["id"], "1.00")
    assert response.status_code == 400 and response.json["error"]["code"] == "invoice_not_refundable"


def test_two_concurrent_refunds_race_for_the_last_refundable_amount(client, auth, app, monkeypatch):
    """Both pass the early check and hold a quote before either writes: only one may take the 6.00
    left (PostgreSQL: the invoice row lock; without it both were created)."""
    import threading

    from blueprints import refunds as refund_routes
    from providers.sandbox import SandboxProvider

    invoice = paid_invoice(client, auth, amount="10.00")
    assert refund(client, auth, invoice["id"], "4.00").status_code == 201
    both_quoted = threading.Barrier(2, timeout=10)

    class QuotesTogether(SandboxProvider):
        def reverse_quote(self, request):
            quote = super().reverse_quote(request)
            both_quoted.wait()
            return quote

    monkeypatch.setattr(refund_routes, "provider", lambda: QuotesTogether())
    answers = []

    def race():
        with app.test_client() as own_client:
            answers.append(refund(own_client, auth, invoice["id"], "6.00"))

    racers = [threading.Thread(target=race) for _ in range(2)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(timeout=30)
    assert sorted(answer.status_code for answer in answers) == [201, 400]
    refused = next(answer for answer in answers if answer.status_code == 400)
    assert refused.json["error"]["code"] == "refund_exceeds_refundable"
    listed = client.get(f"/v1/invoices/{invoice['id']}/refunds", headers=auth).json["data"]
    assert sorted(r["amount"] for r in listed) == ["4.00", "6.00"]


def test_an_expired_refund_frees_its_amount_and_late_funding_is_recorded(client, auth):
    """Unfunded past its deadline: the sweep (asking the provider first) expires it and its amount is
    free again; funding sent after that is still recorded on it, and the provider sends it back."""
    from core.clock import utcnow
    from providers.sandbox import SandboxProvider
    from services.engine import refunds as refund_service

    invoice = paid_invoice(client, auth, amount="10.00")
    created = refund(client, auth, invoice["id"], "10.00").json
    past_deadline(created["id"])
    with db.connection_context():
        assert refund_service.expire_due(SandboxProvider(), now=utcnow()) == 1
    expired = client.get(f"/v1/refunds/{created['id']}", headers=auth).json
    assert expired["status"] == "expired"
    assert refund(client, auth, invoice["id"], "10.00").status_code == 201        # the amount is free again

    late = fund(client, auth, created["id"])                                      # after the deadline
    assert late["status"] == "expired"
    assert late["funding"]["received_amount"] == "10.00" and late["funding"]["returned_amount"] == "10.00"
    with db.connection_context():
        kinds = [e.type for e in Event.select().where(Event.type.startswith("refund."))]
    assert kinds.count("refund.expired") == 1


def test_refund_polling_keeps_the_payments_pace_and_ends(client, auth, store):
    """The refund poller's schedule is the payments' adaptive one (services/engine/polling.py), and
    a refund is never polled again once it ended or its watch window closed."""
    import datetime as dt

    from core.clock import utcnow
    from services.engine import poll_state, polling

    now = utcnow()
    invoice = factories.make_invoice(store, status="paid")
    fresh = factories.make_refund(invoice, now=now)
    assert polling.refund_next_poll_at(fresh, now=now, base_seconds=10, hot_seconds=2) == now + dt.timedelta(seconds=2)
    quiet = factories.make_refund(invoice, now=now - dt.timedelta(minutes=30), expires_at=now + dt.timedelta(hours=1))
    assert polling.refund_next_poll_at(quiet, now=now, base_seconds=10, hot_seconds=2) == now + dt.timedelta(seconds=30)
    closed = factories.make_refund(invoice, now=now - dt.timedelta(hours=2), status="expired",
                                   expires_at=now - dt.timedelta(hours=1))
    assert polling.refund_next_poll_at(closed, now=now, base_seconds=10) == now + dt.timedelta(seconds=120)
    past_window = now + dt.timedelta(hours=26)
    assert polling.refund_next_poll_at(closed, now=past_window, base_seconds=10) is None
    done = factories.make_refund(invoice, status="succeeded")
    assert polling.refund_next_poll_at(done, now=now, base_seconds=10, hot_seconds=2) is None

    paid = paid_invoice(client, auth, amount="10.00")
    created = refund(client, auth, paid["id"], "10.00").json
    fund(client, auth, created["id"])
    with db.connection_context():
        funded = Refund.get(Refund.public_id == created["id"])
        assert funded.status == "succeeded" and poll_state.next_poll_of(funded.id) is None  # nothing left to ask
