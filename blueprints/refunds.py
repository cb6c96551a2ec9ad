"""Merchant refunds (docs/refunds.md): create one for an invoice, read, list, cancel."""
from functools import partial

from flask import Blueprint, g

from blueprints.auth import requires_scope
from blueprints.context import provider, settings
from blueprints.idempotency import idempotent
from blueprints.requests import listed, load_body
from core.clock import utcnow
from schemas.refunds import RefundCreateSchema, RefundListQuerySchema, RefundSchema
from services.engine import invoices, polling, refunds

bp = Blueprint("refunds", __name__, url_prefix="/v1")


@bp.post("/invoices/<invoice_id>/refunds")
@requires_scope("refunds:write")
@idempotent()
def create_refund(invoice_id):
    invoice = invoices.get_for_store(g.store, invoice_id)
    data = load_body(RefundCreateSchema())
    refund = refunds.create_refund(invoice, g.api_key, data, provider(), now=utcnow())
    polling.request_poll("refunds")    # after commit: the funding is watched from now on
    return RefundSchema().dump(refunds.get_for_store(g.store, refund.public_id)), 201


@bp.get("/invoices/<invoice_id>/refunds")
@requires_scope("refunds:read")
def list_invoice_refunds(invoice_id):
    invoice = invoices.get_for_store(g.store, invoice_id)

    def of_invoice(query, page):
        return refunds.list_for_store(g.store, g.api_key, {**query, "invoice_id": invoice.public_id}, page)

    return listed(of_invoice, RefundSchema(many=True).dump, RefundListQuerySchema(exclude=("invoice_id",)))


@bp.get("/refunds")
@requires_scope("refunds:read")
def list_refunds():
    return listed(partial(refunds.list_for_store, g.store, g.api_key), RefundSchema(many=True).dump,
                  RefundListQuerySchema())


@bp.get("/refunds/<refund_id>")
@requires_scope("refunds:read")
def get_refund(refund_id):
    return RefundSchema().dump(refunds.get_for_store(g.store, refund_id, g.api_key))


@bp.post("/refunds/<refund_id>/cancel")
@requires_scope("refunds:write")
@idempotent()
def cancel_refund(refund_id):
    refund = refunds.get_for_store(g.store, refund_id, g.api_key)
    refunds.cancel(refund, g.api_key, provider(), now=utcnow(),
                   timeout_seconds=settings().expiry_provider_timeout_seconds)
    return RefundSchema().dump(refunds.get_for_store(g.store, refund_id, g.api_key))
