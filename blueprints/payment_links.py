"""Payment links, merchant side: /v1/payment-links (scopes payment_links:write / :read)."""
from flask import Blueprint, g

from blueprints.auth import requires_scope
from blueprints.context import settings
from blueprints.idempotency import idempotent
from blueprints.requests import load_body, load_query
from core.clock import utcnow
from infra.pagination import PageRequest
from schemas.common import ListQuerySchema, page_envelope
from schemas.payment_links import (PaymentLinkCreateSchema, PaymentLinkInvoiceSchema, PaymentLinkListQuerySchema,
                                   PaymentLinkSchema, PaymentLinkUpdateSchema)
from schemas.transactions import TransactionSchema
from services import payment_links

bp = Blueprint("payment_links", __name__, url_prefix="/v1/payment-links")


@bp.post("")
@requires_scope("payment_links:write")
@idempotent()
def create_payment_link():
    data = load_body(PaymentLinkCreateSchema())
    link = payment_links.create_link(g.store, data, now=utcnow(), supported_currencies=settings().supported_currencies)
    return PaymentLinkSchema().dump(link), 201


@bp.get("")
@requires_scope("payment_links:read")
def list_payment_links():
    query = load_query(PaymentLinkListQuerySchema())
    page = payment_links.list_for_store(g.store, query, PageRequest.from_query(query))
    return page_envelope(page, PaymentLinkSchema(many=True).dump(page.rows))


@bp.get("/<link_id>")
@requires_scope("payment_links:read")
def get_payment_link(link_id):
    return PaymentLinkSchema().dump(payment_links.get_for_store(g.store, link_id))


@bp.patch("/<link_id>")
@requires_scope("payment_links:write")
def update_payment_link(link_id):
    link = payment_links.get_for_store(g.store, link_id)
    changes = load_body(PaymentLinkUpdateSchema())
    return PaymentLinkSchema().dump(payment_links.update_link(link, changes, now=utcnow()))


@bp.post("/<link_id>/activate")
@requires_scope("payment_links:write")
@idempotent()
def activate_payment_link(link_id):
    link = payment_links.get_for_store(g.store, link_id)
    return PaymentLinkSchema().dump(payment_links.activate(link, now=utcnow()))


@bp.post("/<link_id>/deactivate")
@requires_scope("payment_links:write")
@idempotent()
def deactivate_payment_link(link_id):
    link = payment_links.get_for_store(g.store, link_id)
    return PaymentLinkSchema().dump(payment_links.deactivate(link, now=utcnow()))


@bp.get("/<link_id>/invoices")
@requires_scope("payment_links:read")
def list_payment_link_invoices(link_id):
    link = payment_links.get_for_store(g.store, link_id)
    query = load_query(ListQuerySchema())
    page = payment_links.list_invoices(link, PageRequest.from_query(query))
    return page_envelope(page, PaymentLinkInvoiceSchema(many=True).dump(page.rows))


@bp.get("/<link_id>/transactions")
@requires_scope("payment_links:read")
def list_payment_link_transactions(link_id):
    link = payment_links.get_for_store(g.store, link_id)
    query = load_query(ListQuerySchema())
    page = payment_links.list_transactions(link, PageRequest.from_query(query))
    return page_envelope(page, TransactionSchema(many=True).dump(page.rows))
