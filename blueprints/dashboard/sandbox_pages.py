"""The sandbox buttons (docs/dashboard.md#the-sandbox): simulate a buyer's payment and fund a
refund, through the same helpers as /v1/test_helpers. Outside the sandbox they do not exist (404)."""
from __future__ import annotations

from flask import flash, g, redirect, request, url_for

from blueprints.context import provider
from blueprints.dashboard import bp, sandbox
from blueprints.dashboard.invoice_pages import ACTOR
from blueprints.dashboard.session_state import note, requires
from blueprints.requests import load
from core.clock import utcnow
from core.errors import NotFound
from schemas.payments import SimulatedPaymentSchema
from schemas.refunds import FundRefundSchema
from services.engine import invoices, polling, refunds, sandbox_payments


def _sandbox_only() -> None:
    if not sandbox():
        raise NotFound("route_not_found", "No such page.")


@bp.post("/invoices/<invoice_id>/simulate-payment")
@requires("operate")
def simulate_payment(invoice_id):
    _sandbox_only()
    invoice = invoices.get_for_store(g.store, invoice_id)
    data = load(SimulatedPaymentSchema(), {"outcome": request.form["outcome"]} if request.form.get("outcome") else {})
    sandbox_payments.simulate_payment(invoice, provider(), now=utcnow(), **data)
    polling.request_poll("chain")
    note("sandbox.simulate_payment", target=invoice.public_id, detail=data.get("outcome") or "success")
    flash("A simulated payment is on its way: the invoice moves within seconds.")
    return redirect(url_for("dashboard.invoice_page", invoice_id=invoice.public_id))


@bp.post("/refunds/<refund_id>/fund")
@requires("operate")
def fund_refund(refund_id):
    _sandbox_only()
    refund = refunds.get_for_store(g.store, refund_id, ACTOR)
    data = load(FundRefundSchema(), {"outcome": request.form["outcome"]} if request.form.get("outcome") else {})
    sandbox_payments.simulate_funding(refund, provider(), now=utcnow(), **data)
    polling.request_poll("refunds")
    note("sandbox.fund_refund", target=refund.public_id, detail=data["outcome"])
    flash("Simulated funding sent: the refund moves within seconds.")
    return redirect(url_for("dashboard.refunds_page"))
