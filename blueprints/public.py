"""Buyer-facing JSON routes (DECISIONS §13): no authentication, buyer-safe fields only."""
from flask import Blueprint

from blueprints.context import provider, settings
from blueprints.requests import load_body
from schemas.payments import AssetSchema, PublicInvoiceSchema, QuoteCreateSchema, QuoteSchema
from services import invoices, quotes
from services.clock import utcnow
from services.errors import validation_error

bp = Blueprint("public", __name__, url_prefix="/v1/public")


def _invoice_view(invoice):
    return {**PublicInvoiceSchema().dump(invoice), "sandbox": settings().swap_provider == "sandbox"}


@bp.get("/assets")
def list_assets():
    return {"data": AssetSchema(many=True).dump(quotes.supported_assets(provider()))}


@bp.get("/invoices/<invoice_id>")
def get_public_invoice(invoice_id):
    return _invoice_view(invoices.get_public(invoice_id))


@bp.post("/invoices/<invoice_id>/quote")
def quote_invoice(invoice_id):
    data = load_body(QuoteCreateSchema())
    invoice = invoices.get_public(invoice_id)
    if data["dry"]:
        quote = quotes.price(invoice, provider(), origin_asset=data["origin_asset"], refund_to=data["refund_to"],
                             now=utcnow())
    else:
        if not data["refund_to"]:
            raise validation_error("refund_to", "is required when dry is false")
        invoice, quote = quotes.commit(invoice, provider(), origin_asset=data["origin_asset"],
                                       refund_to=data["refund_to"], now=utcnow())
    invoice = invoices.get_public(invoice_id)
    return {"invoice": _invoice_view(invoice), "quote": QuoteSchema().dump(quote) if quote else None,
            "dry": data["dry"]}
