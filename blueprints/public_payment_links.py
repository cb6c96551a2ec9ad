"""Payment links, buyer side: /v1/public/payment-links/{plpub_…}, no API key (spec Authentication 5)."""
from flask import Blueprint

from blueprints.context import provider, settings
from blueprints.idempotency import idempotent, per_buyer
from blueprints.requests import load_body
from core.clock import utcnow
from schemas.payment_links import CheckoutResultSchema, CheckoutSchema, PaymentLinkPublicSchema
from services import payment_links
from services.engine import checkout
from services.engine.payout_terms import Pricing

bp = Blueprint("public_payment_links", __name__, url_prefix="/v1/public/payment-links")


@bp.get("/<token>")
def get_public_payment_link(token):
    return PaymentLinkPublicSchema().dump(payment_links.get_public(token))


@bp.post("/<token>/checkout")
@idempotent(per_buyer("checkout", payment_links.get_public))
def checkout_payment_link(token):
    data = load_body(CheckoutSchema())
    result = checkout.start_checkout(token, data, now=utcnow(), ttl_seconds=settings().invoice_ttl_seconds,
                                     get_provider=provider, pricing=Pricing.of(settings()))
    return CheckoutResultSchema().dump(result), 201
