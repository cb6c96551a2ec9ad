"""Buyer-facing JSON routes (docs/checkout.md): no authentication, buyer-safe fields only."""
from flask import Blueprint

from blueprints.context import provider, settings
from blueprints.idempotency import idempotent, per_buyer
from blueprints.requests import load_body
from blueprints.sandbox_payments import sandbox_only
from core.clock import utcnow
from core.errors import BadRequest, validation_error
from schemas.payments import AssetSchema, BuyerSimulatedPaymentSchema, EstimateSchema, PublicInvoiceSchema, \
    QuoteCreateSchema, QuoteSchema
from schemas.refunds import PublicRefundSchema
from services.engine import buyer_payments, invoices, polling, quotes, refunds, sandbox_payments
from services.engine.payout_terms import Pricing

bp = Blueprint("public", __name__, url_prefix="/v1/public")


def _invoice_view(invoice):
    return {**PublicInvoiceSchema().dump(buyer_payments.with_payment_details(invoice)),
            "sandbox": settings().swap_provider == "sandbox"}


@bp.get("/assets")
def list_assets():
    return {"data": AssetSchema(many=True).dump(quotes.supported_assets(provider()))}


@bp.get("/invoices/<invoice_id>")
def get_public_invoice(invoice_id):
    return _invoice_view(invoices.get_public(invoice_id))


@bp.get("/refunds/<refund_id>")
def get_public_refund(refund_id):
    """The funding page's status: what to send and where, and how far it went (no buyer address)."""
    return PublicRefundSchema().dump(refunds.get_public(refund_id))


@bp.post("/invoices/<invoice_id>/quote")
@idempotent(per_buyer("invoice", invoices.get_public))
def quote_invoice(invoice_id):
    data = load_body(QuoteCreateSchema())
    invoice = invoices.get_public(invoice_id)
    invoices.give_customer_email(invoice, data["customer_email"])
    pricing = Pricing.of(settings())
    if data["dry"]:
        quote, terms = quotes.price(invoice, provider(), origin_asset=data["origin_asset"],
                                    refund_to=data["refund_to"], now=utcnow(), pricing=pricing)
        estimate = EstimateSchema().dump(terms)
    else:
        if not data["refund_to"]:
            raise validation_error("refund_to", "is required when dry is false")
        invoice, quote = quotes.commit(invoice, provider(), origin_asset=data["origin_asset"],
                                       refund_to=data["refund_to"], now=utcnow(), pricing=pricing,
                                       min_remaining_seconds=settings().quote_min_remaining_seconds)
        estimate = None
    invoice = invoices.get_public(invoice_id)
    return {"invoice": _invoice_view(invoice), "quote": QuoteSchema().dump(quote) if quote else None,
            "estimate": estimate, "dry": data["dry"]}


@bp.post("/invoices/<invoice_id>/simulate-payment")
@sandbox_only
@idempotent(per_buyer("invoice", invoices.get_public))
def simulate_public_payment(invoice_id):
    """The hosted page's "Simulate payment" (sandbox only): the test helper's service, without a key,
    for an invoice that already has its deposit address (the buyer chose asset and refund address)."""
    data = load_body(BuyerSimulatedPaymentSchema())
    invoice = invoices.get_public(invoice_id)
    if not invoice.deposit_address:
        raise BadRequest("invoice_not_payable", f"Invoice {invoice.public_id} has no deposit address yet; "
                         "choose an asset and a refund address first.")
    invoice = sandbox_payments.simulate_payment(invoice, provider(), now=utcnow(), outcome=data["outcome"],
                                                amount=None, origin_asset=None, refund_to=None,
                                                pricing=Pricing.of(settings()))
    polling.request_poll("chain")   # after commit: poll now, not at the next tick
    return _invoice_view(invoice), 202
