"""The sandbox payment helpers, `/v1/test_helpers/…` (docs/payment-engine.md): 404 unless SWAP_PROVIDER=sandbox."""
from functools import wraps

from flask import Blueprint, g

from blueprints.auth import requires_scope
from blueprints.context import provider, settings
from blueprints.idempotency import idempotent
from blueprints.requests import load_body
from core.clock import utcnow
from core.errors import NotFound
from schemas.invoices import InvoiceSchema
from schemas.payments import SimulatedPaymentSchema
from schemas.refunds import FundRefundSchema, RefundSchema
from services.engine import invoices, polling, refunds, sandbox_payments
from services.engine.payout_terms import Pricing

bp = Blueprint("test_helpers", __name__, url_prefix="/v1/test_helpers")


def sandbox_only(view):
    @wraps(view)
    def wrapper(*args, **kwargs):
        if settings().swap_provider != "sandbox":
            raise NotFound("route_not_found", "No such route.")   # as if it did not exist
        return view(*args, **kwargs)
    return wrapper


@bp.post("/invoices/<invoice_id>/pay")
@sandbox_only
@requires_scope("invoices:write")
@idempotent()
def pay_invoice(invoice_id):
    data = load_body(SimulatedPaymentSchema())
    invoice = invoices.get_for_store(g.store, invoice_id)
    invoice = sandbox_payments.simulate_payment(invoice, provider(), now=utcnow(), pricing=Pricing.of(settings()),
                                                **data)
    polling.request_poll("chain")   # after commit: poll now, not at the next tick
    return InvoiceSchema().dump(invoice), 202


@bp.post("/refunds/<refund_id>/fund")
@sandbox_only
@requires_scope("refunds:write")
@idempotent()
def fund_refund(refund_id):
    refund = refunds.get_for_store(g.store, refund_id, g.api_key)
    data = load_body(FundRefundSchema())
    sandbox_payments.simulate_funding(refund, provider(), now=utcnow(), **data)
    polling.request_poll("refunds")   # after commit: poll now, not at the next tick
    return RefundSchema().dump(refunds.get_for_store(g.store, refund_id, g.api_key)), 202
