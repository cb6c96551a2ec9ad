"""Every kind of merchant and buyer mail, reached through the facts that cause it (payments,
refunds, webhook endpoints), sent once each to a real SMTP server with the right content, and only
to the addresses of the store the fact belongs to."""
from __future__ import annotations

import datetime as dt

import pytest

from core.clock import utcnow
from models.base import db
from models.mail import Mail
from models.refunds import Refund
from models.webhooks import WebhookEndpoint
from services.mail import notices
from tests import factories
from tests.payflow import poll_until_quiet, run_pipeline
from tests.services.mail.conftest import send
from tests.services.webhooks.conftest import pump
from tests.services.webhooks.test_delivery import make_endpoint

OPS, OWNER, BUYER = "ops@shop.example", "owner@shop.example", "buyer@example.com"


@pytest.fixture
def mailed(client, auth, other_store):
    """The store mails OPS and OWNER; another store mails its own address."""
    client.patch("/v1/store/notifications", json={"recipients": [OPS, OWNER]}, headers=auth)
    other = {"Authorization": f"Bearer {factories.make_key(other_store)}"}
    client.patch("/v1/store/notifications", json={"recipients": ["them@other.example"]}, headers=other)


def _pay(client, auth, outcome="success", **invoice):
    created = client.post("/v1/invoices", json={"amount": "25.00", "external_order_id": "order-7", **invoice},
                          headers=auth).json
    client.post(f"/v1/test_helpers/invoices/{created['id']}/pay", json={"outcome": outcome,
                                                                       "origin_asset": "usdc.base"}, headers=auth)
    run_pipeline()
    return client.get(f"/v1/invoices/{created['id']}", headers=auth).json


def _text(received) -> str:
    return received.message.get_body(("plain",)).get_content()


def _kinds() -> dict:
    with db.connection_context():
        rows = list(Mail.select())
    kinds: dict = {}
    for row in rows:
        kinds.setdefault(row.kind, []).append(row.recipient)
    return {kind: sorted(recipients) for kind, recipients in kinds.items()}


def test_a_paid_invoice_mails_the_merchant_and_a_receipt_to_the_buyer_once(app, client, auth, mailed, smtp, sending):
    invoice = _pay(client, auth, customer_email=BUYER)
    assert invoice["status"] == "paid"
    run_pipeline()
    send(sending)
    send(sending)
    assert _kinds() == {"payment_received": [OPS, OWNER], "receipt": [BUYER]}
    [receipt] = smtp.to(BUYER)
    text = _text(receipt)
    for shown in ("Test shop", "25.00 USD", "usdc.base", invoice["transaction_hash"], invoice["id"]):
        assert shown in text
    assert receipt.message["Subject"] == "Your receipt from Test shop: 25.00 USD"
    [to_ops] = smtp.to(OPS)
    assert invoice["id"] in to_ops.message["Subject"] and "order-7" in _text(to_ops)
    assert smtp.to("them@other.example") == []          # another store's addresses never
    assert "sk_live_" not in receipt.raw.decode() and "whsec_" not in to_ops.raw.decode()


def test_the_payment_mail_shows_the_fixed_rate_and_the_fee_as_the_dashboard_does(app, client, auth, mailed, smtp,
                                                                                 sending, fee_of_100_bps):
    from decimal import Decimal

    from core import money
    from services.engine import exchange_rates

    with db.connection_context():
        exchange_rates.set_sandbox_rate("EUR", Decimal("1.08"), now=utcnow())
    invoice_id = client.post("/v1/invoices", json={"amount": "100.00", "currency": "EUR"}, headers=auth).json["id"]
    assert client.post(f"/v1/public/invoices/{invoice_id}/quote", json={
        "origin_asset": "usdc.eth", "refund_to": "0x" + "b" * 40, "dry": False}).status_code == 200
    client.post(f"/v1/test_helpers/invoices/{invoice_id}/pay", json={}, headers=auth)
    run_pipeline()
    send(sending)
    invoice = client.get(f"/v1/invoices/{invoice_id}", headers=auth).json
    text = " ".join(_text(smtp.to(OPS)[0]).split())
    fixed_at = invoice["exchange_rate"]["fixed_at"]
    for line in (f"Exchange rate: 1 EUR = 1.080 USD (from sandbox, fixed {fixed_at})", "Payout: 108.00 usdc.near",
                 "Fee: 1.00 EUR (100 bps)", "Amount: 100.00 EUR"):
        assert line in text, line
    for label, shown in money.invoice_money_lines(invoice):   # the dashboard's lines, word for word
        assert f"{label}: {shown}" in text


def test_no_customer_email_no_receipt_and_a_kind_switched_off_is_not_sent(app, client, auth, mailed, smtp, sending):
    client.patch("/v1/store/notifications", json={"kinds": {"payment_received": False}}, headers=auth)
    _pay(client, auth)
    send(sending)
    assert _kinds() == {} and smtp.received == []


def test_an_underpaid_invoice(app, client, auth, mailed, smtp, sending):
    invoice = _pay(client, auth, outcome="underpaid", customer_email=BUYER)
    assert invoice["status"] == "underpaid"
    send(sending)
    assert _kinds() == {"invoice_underpaid": [OPS, OWNER]}
    assert "Underpaid" in smtp.to(OPS)[0].message["Subject"]


def test_refunds_awaiting_funds_a_reminder_then_sent_and_failed(app, client, auth, mailed, smtp, sending):
    invoice = _pay(client, auth, customer_email=BUYER)
    refund = client.post(f"/v1/invoices/{invoice['id']}/refunds", json={"amount": "10.00"}, headers=auth).json
    with db.connection_context():
        deadline = Refund.get(Refund.public_id == refund["id"]).expires_at
        assert notices.sweep(now=deadline - dt.timedelta(minutes=40)) == 0          # not yet
        assert notices.sweep(now=deadline - dt.timedelta(minutes=20)) == 2
        assert notices.sweep(now=deadline - dt.timedelta(minutes=10)) == 0          # once
    client.post(f"/v1/test_helpers/refunds/{refund['id']}/fund", json={}, headers=auth)
    poll_until_quiet("refunds")
    failing = client.post(f"/v1/invoices/{invoice['id']}/refunds", json={"amount": "5.00"}, headers=auth).json
    client.post(f"/v1/test_helpers/refunds/{failing['id']}/fund", json={"outcome": "failed"}, headers=auth)
    poll_until_quiet("refunds")
    assert client.get(f"/v1/refunds/{failing['id']}", headers=auth).json["status"] == "failed"
    send(sending, clock=lambda: deadline)         # the reminders are due from the sweep's "now"
    kinds = _kinds()
    assert kinds["refund_awaiting_funds"] == [OPS, OPS, OWNER, OWNER]
    assert kinds["refund_funding_reminder"] == [OPS, OWNER]
    assert kinds["refund_succeeded"] == [OPS, OWNER] and kinds["refund_failed"] == [OPS, OWNER]
    assert kinds["refund_sent"] == [BUYER]              # one notice, for the refund that was sent
    notice = [mail for mail in smtp.to(BUYER) if "refund" in mail.message["Subject"]]
    assert len(notice) == 1 and refund["id"] not in _text(notice[0]) and "10.00 USD" in _text(notice[0])
    reminder = [mail for mail in smtp.to(OPS) if mail.message["Subject"].startswith("Reminder")]
    assert len(reminder) == 1 and refund["id"] in _text(reminder[0])


def test_an_endpoint_failing_for_an_hour_and_one_disabled(app, client, auth, mailed, smtp, sending, receiver, policy):
    receiver.script("/failing/receiver-secret", [500] * 5)
    failing = make_endpoint(client, auth, receiver.url("/failing/receiver-secret"))
    client.post("/v1/invoices", json={"amount": "10.00"}, headers=auth)
    pump(policy)
    with db.connection_context():
        WebhookEndpoint.update(failing_since=utcnow() - dt.timedelta(minutes=59)).execute()
        assert notices.sweep(now=utcnow()) == 0                                 # not an hour yet
        WebhookEndpoint.update(failing_since=utcnow() - dt.timedelta(minutes=61)).execute()
        assert notices.sweep(now=utcnow()) == 2
        assert notices.sweep(now=utcnow()) == 0                                 # once per failing spell
    receiver.script("/gone", [410])
    gone = make_endpoint(client, auth, receiver.url("/gone"), events=["invoice.created"])
    client.post("/v1/invoices", json={"amount": "10.00"}, headers=auth)
    pump(policy)
    pump(policy)
    assert client.get(f"/v1/webhook-endpoints/{gone['id']}", headers=auth).json["enabled"] is False
    send(sending)
    assert _kinds() == {"endpoint_failing": [OPS, OWNER], "endpoint_disabled": [OPS, OWNER]}
    texts = {mail.message["Subject"]: _text(mail) for mail in smtp.to(OWNER)}
    failing_text = texts[f"Webhook endpoint {failing['id']} has been failing for an hour"]
    assert "receiver-secret" not in failing_text and "HTTP 500" in failing_text
    assert "410 Gone" in texts[f"Webhook endpoint {gone['id']} was disabled"]
