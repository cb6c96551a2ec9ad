"""The hosted buyer pages (docs/checkout.md): GET /checkout/{inv_id} and GET /pay/{plpub_id}.

Server-rendered HTML with a little plain JavaScript (static/) over the buyer JSON routes. Only
buyer-safe views are rendered (the schemas the JSON routes use), never metadata, merchant ids or
payout wallets. Everything the pages load comes from this app; the CSP allows nothing else.
An unknown invoice or link is an HTML 404 here: these are pages, not API routes.
"""
from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, render_template, request

from blueprints.context import settings
from blueprints.rate_limits import limit_page_request
from core import networks, qr_codes
from core.clock import isoformat, utcnow
from core.errors import NotFound
from providers.sandbox import OUTCOMES
from schemas.payment_links import PaymentLinkPublicSchema
from schemas.payments import PublicInvoiceSchema
from schemas.refunds import PublicRefundSchema
from services import payment_links
from services.engine import buyer_payments, checkout, invoices, refunds

ROOT = Path(__file__).resolve().parent.parent
bp = Blueprint("pages", __name__, template_folder=str(ROOT / "templates"), static_folder=str(ROOT / "static"),
               static_url_path="/assets")
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
            "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
STATIC_MAX_AGE = 300


@bp.before_request
def _limit():
    if request.endpoint != "pages.static":      # pages and QR codes count; the static files do not
        limit_page_request()


@bp.after_request
def _headers(response: Response) -> Response:
    # Runs before the app's own hook, which only fills headers still missing (app.py).
    response.headers["Content-Security-Policy"] = PAGE_CSP
    response.headers["Permissions-Policy"] = "camera=(), microphone=(), geolocation=(), payment=()"
    return response


def _render(template: str, status: int = 200, **context) -> tuple[str, int]:
    return render_template(template, **context), status


@bp.errorhandler(NotFound)
def _not_found(error: NotFound):
    # An unknown invoice or link is a page here, not the API's JSON 404: "invoice_not_found" → "invoice".
    return _render("not_found.html", 404, what=error.code.removesuffix("_not_found").replace("_", " "))


@bp.get("/checkout/<invoice_id>")
def checkout_page(invoice_id):
    invoice = invoices.get_public(invoice_id)
    return _render("checkout.html", invoice=PublicInvoiceSchema().dump(buyer_payments.with_payment_details(invoice)),
                   sandbox=settings().swap_provider == "sandbox", sandbox_outcomes=OUTCOMES,
                   networks=networks.page_rules(), now=isoformat(utcnow()))


@bp.get("/checkout/<invoice_id>/qr.svg")
def checkout_qr_code(invoice_id):
    invoice = invoices.get_public(invoice_id)
    if not invoice.deposit_address:
        return _render("not_found.html", 404, what="deposit address")
    # The address only: every wallet reads it, whereas payment URIs differ from chain to chain.
    # no-store like every other answer (app.py): the address is the buyer's, and a shared or disk cache
    # must not keep it after the page is gone.
    return Response(qr_codes.svg(invoice.deposit_address), mimetype="image/svg+xml")


@bp.get("/fund/<refund_id>")
def funding_page(refund_id):
    """The merchant's page for funding a refund (docs/refunds.md): what to send, where, until when."""
    refund = refunds.get_public(refund_id)
    return _render("fund.html", refund=PublicRefundSchema().dump(refund), now=isoformat(utcnow()),
                   sandbox=settings().swap_provider == "sandbox")


@bp.get("/fund/<refund_id>/qr.svg")
def funding_qr_code(refund_id):
    refund = refunds.get_public(refund_id)
    # no-store like every other answer (app.py), as the checkout's QR: a shared or disk cache must
    # not keep where a merchant's money goes.
    return Response(qr_codes.svg(refund.deposit_address), mimetype="image/svg+xml")


@bp.get("/pay/<token>")
def payment_link_page(token):
    link = payment_links.get_public(token)
    taken_until = checkout.taken_until(link, now=utcnow()) if link.status == "active" else None
    return _render("pay.html", link=PaymentLinkPublicSchema().dump(link), networks=networks.page_rules(),
                   taken_until=isoformat(taken_until))


@bp.get("/favicon.ico")
def favicon():
    return bp.send_static_file("favicon.svg")
