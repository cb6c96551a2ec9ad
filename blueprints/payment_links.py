"""Payment links, merchant side: /v1/payment-links (scopes payment_links:write / :read)."""
from functools import partial

from flask import Blueprint, g

from blueprints.auth import requires_scope
from blueprints.context import settings
from blueprints.idempotency import idempotent
from blueprints.requests import listed, load_body
from core.clock import utcnow
from schemas.payment_links import (PaymentLinkCreateSchema, PaymentLinkInvoiceSchema, PaymentLinkListQuerySchema,
                                   PaymentLinkSchema, PaymentLinkUpdateSchema)
from schemas.transactions import TransactionSchema
from services import payment_links
from services.engine import transactions

bp = Blueprint("payment_links", __name__, url_prefix="/v1/payment-links")


def _store_link(link_id: str):
    """The caller's store's link, or 404 `payment_link_not_found` (another store's link too)."""
    return payment_links.get_for_store(g.store, link_id)


def _link_after(change, link_id: str) -> dict:
    """The link, as `change(link, now=…)` leaves it (activate, deactivate)."""
    return PaymentLinkSchema().dump(change(_store_link(link_id), now=utcnow()))


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
    return listed(partial(payment_links.list_for_store, g.store), PaymentLinkSchema(many=True).dump,
                  PaymentLinkListQuerySchema())


@bp.get("/<link_id>")
@requires_scope("payment_links:read")
def get_payment_link(link_id):
    return PaymentLinkSchema().dump(_store_link(link_id))


@bp.patch("/<link_id>")
@requires_scope("payment_links:write")
def update_payment_link(link_id):
    link = _store_link(link_id)
    changes = load_body(PaymentLinkUpdateSchema())
    return PaymentLinkSchema().dump(payment_links.update_link(link, changes, now=utcnow()))


@bp.post("/<link_id>/activate")
@requires_scope("payment_links:write")
@idempotent()
def activate_payment_link(link_id):
    return _link_after(payment_links.activate, link_id)


@bp.post("/<link_id>/deactivate")
@requires_scope("payment_links:write")
@idempotent()
def deactivate_payment_link(link_id):
    return _link_after(payment_links.deactivate, link_id)


@bp.get("/<link_id>/invoices")
@requires_scope("payment_links:read")
def list_payment_link_invoices(link_id):
    link = _store_link(link_id)
    return listed(partial(payment_links.list_invoices, link), PaymentLinkInvoiceSchema(many=True).dump)


@bp.get("/<link_id>/transactions")
@requires_scope("payment_links:read")
def list_payment_link_transactions(link_id):
    link = _store_link(link_id)
    return listed(partial(transactions.list_for_payment_link, link), TransactionSchema(many=True).dump)
