"""Payment links in the dashboard: list, create, edit, activate, deactivate, and the link's QR code;
the same service calls and schemas as /v1/payment-links."""
from __future__ import annotations

from flask import Response, flash, g, redirect, render_template, request, url_for

from blueprints.context import settings
from blueprints.dashboard import bp
from blueprints.dashboard.forms import filled, form_fields
from blueprints.dashboard.session_state import note, requires
from blueprints.requests import load
from core import qr_codes, urls
from core.clock import utcnow
from core.errors import BadRequest
from infra.pagination import PageRequest
from models.payment_links import AMOUNT_MODES
from schemas.payment_links import (PaymentLinkCreateSchema, PaymentLinkListQuerySchema, PaymentLinkSchema,
                                   PaymentLinkUpdateSchema)
from services import payment_links

TEXT_FIELDS = ("title", "amount_mode", "amount", "min_amount", "max_amount")
FLAGS = ("allow_multiple_payments", "public_visible")


def _form(link=None, error=None, values=None, status=200):
    return render_template("dashboard/payment_link_form.html", link=link, error=error, values=values or {},
                           modes=AMOUNT_MODES, currencies=settings().supported_currencies), status


@bp.get("/payment-links")
@requires("read")
def payment_links_page():
    query = load(PaymentLinkListQuerySchema(), {**filled(("status", "starting_after")), "limit": 25})
    page = payment_links.list_for_store(g.store, query, PageRequest.from_query(query))
    return render_template("dashboard/payment_links.html", links=PaymentLinkSchema(many=True).dump(page.rows),
                           has_more=page.has_more)


@bp.route("/payment-links/new", methods=["GET", "POST"])
@requires("operate")
def new_payment_link():
    if request.method == "GET":
        return _form(values={"public_visible": True, "allow_multiple_payments": True, "currency": "USD"})
    fields = {**form_fields(text=TEXT_FIELDS + ("currency",), flags=FLAGS)}
    try:
        link = payment_links.create_link(g.store, load(PaymentLinkCreateSchema(), fields), now=utcnow(),
                                         supported_currencies=settings().supported_currencies)
    except BadRequest as error:
        return _form(error=error.message, values=fields, status=400)
    note("payment_link.create", target=link.public_id)
    flash("Payment link created.")
    return redirect(url_for("dashboard.payment_link_page", link_id=link.public_id))


@bp.route("/payment-links/<link_id>", methods=["GET", "POST"])
@requires("read")
def payment_link_page(link_id):
    link = payment_links.get_for_store(g.store, link_id)
    shown = PaymentLinkSchema().dump(link)
    if request.method == "GET":
        return render_template("dashboard/payment_link.html", link=shown)
    return _edit(link, shown)


@requires("operate")
def _edit(link, shown):
    fields = form_fields(text=TEXT_FIELDS, flags=FLAGS)
    try:
        link = payment_links.update_link(link, load(PaymentLinkUpdateSchema(), fields), now=utcnow())
    except BadRequest as error:
        return _form(link=shown, error=error.message, values={**shown, **fields}, status=400)
    note("payment_link.update", target=link.public_id)
    flash("Payment link saved.")
    return redirect(url_for("dashboard.payment_link_page", link_id=link.public_id))


@bp.get("/payment-links/<link_id>/edit")
@requires("operate")
def edit_payment_link(link_id):
    shown = PaymentLinkSchema().dump(payment_links.get_for_store(g.store, link_id))
    return _form(link=shown, values=shown)


@bp.post("/payment-links/<link_id>/<any(activate, deactivate):change>")
@requires("operate")
def change_payment_link(link_id, change):
    link = payment_links.get_for_store(g.store, link_id)
    getattr(payment_links, change)(link, now=utcnow())
    note(f"payment_link.{change}", target=link.public_id)
    flash(f"Payment link {change}d.")
    return redirect(url_for("dashboard.payment_link_page", link_id=link.public_id))


@bp.get("/payment-links/<link_id>/qr.svg")
@requires("read")
def payment_link_qr_code(link_id):
    link = payment_links.get_for_store(g.store, link_id)
    return Response(qr_codes.svg(urls.payment_link_url(link.plpub_id)), mimetype="image/svg+xml")
