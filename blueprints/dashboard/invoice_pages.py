"""Invoices and refunds in the dashboard: the list (the API's filters and keyset pages), one
invoice's timeline, cancel and refund: the same service calls as /v1/invoices and /v1/refunds."""
from __future__ import annotations

from types import SimpleNamespace

from flask import flash, g, redirect, render_template, request, url_for

from blueprints.context import provider, settings
from blueprints.dashboard import bp, sandbox
from blueprints.dashboard.forms import filled, form_fields
from blueprints.dashboard.session_state import note, requires
from blueprints.requests import load
from core import ids, money
from core.clock import utcnow
from core.errors import BadRequest, Unavailable
from infra.pagination import PageRequest
from schemas.invoices import InvoiceListQuerySchema, InvoiceSchema, InvoiceStatusPollSchema
from schemas.payments import EstimateSchema
from schemas.refunds import RefundCreateSchema, RefundListQuerySchema, RefundSchema
from schemas.transactions import TransactionSchema
from services.engine import invoice_states, invoices, payout_terms, polling, refunds, transactions
from services.engine.payout_terms import Pricing
from services.webhooks import outbox

# The dashboard acts for the store as a standard key would: no installation's limits apply.
ACTOR = SimpleNamespace(kind="dashboard", id=None)
PAGE_SIZE = 25
_SETTLED = InvoiceStatusPollSchema(only=("received_amount", "difference_amount"))
INVOICE_FILTERS = ("status", "external_order_id", "payment_link_id", "created_after", "created_before",
                   "starting_after", "ending_before")


@bp.get("/invoices")
@requires("read")
def invoices_page():
    search = request.args.get("q", "").strip()
    if ids.is_public_id(search, "inv_"):
        return redirect(url_for("dashboard.invoice_page", invoice_id=search))
    given = {**filled(INVOICE_FILTERS), **({"external_order_id": search} if search else {})}
    statuses = InvoiceListQuerySchema().fields["status"].validate.choices
    try:
        query = load(InvoiceListQuerySchema(), {**given, "limit": PAGE_SIZE})
        page = invoices.list_for_store(g.store, query, PageRequest.from_query(query), now=utcnow())
    except BadRequest as error:
        # A filter the API refuses (a bad date, a malformed link id, an unknown cursor): said on the form.
        return render_template("dashboard/invoices.html", invoices=[], has_more=False, filters=given,
                               search=search, statuses=statuses, error=error.message), 400
    return render_template("dashboard/invoices.html", invoices=InvoiceSchema(many=True).dump(page.rows),
                           has_more=page.has_more, filters=given, search=search, statuses=statuses,
                           older=_keyset_args(given, search, starting_after=page.rows[-1].public_id)
                           if page.has_more else None)


def _keyset_args(given: dict, search: str, **cursor) -> dict:
    """The next page's query: the same filters, as typed, with its own cursor."""
    kept = {name: value for name, value in given.items()
            if name not in ("starting_after", "ending_before") and not (search and name == "external_order_id")}
    return {**kept, **({"q": search} if search else {}), **cursor}


@bp.get("/invoices/<invoice_id>")
@requires("read")
def invoice_page(invoice_id):
    invoice = invoices.get_for_store(g.store, invoice_id)
    events, deliveries = outbox.invoice_history(invoice)
    invoice_refunds, refundable = refunds.of_invoice(invoice, limit=100)
    shown = {**InvoiceSchema().dump(invoice), **_SETTLED.dump(invoice)}
    estimate, no_rate = _estimate(invoice)
    return render_template(
        "dashboard/invoice.html", invoice=shown, money=money.invoice_money_lines(shown, estimate), no_rate=no_rate,
        events=events,
        event_types={e.id: e.type for e in events}, deliveries=deliveries,
        transactions=TransactionSchema(many=True).dump(transactions.list_for_invoice(invoice)),
        refunds=RefundSchema(many=True).dump(invoice_refunds), sandbox=sandbox(),
        refundable=refundable > 0,
        can_cancel=invoice_states.can_cancel(invoice))


def _estimate(invoice) -> tuple[dict | None, bool]:
    """Before the buyer commits: the terms at today's rate, as the checkout's dry quote shows them
    (and whether there is no usable rate now). After, or once it takes no quote: none."""
    if invoice.payout_amount is not None or not invoice_states.can_quote(invoice):
        return None, False
    try:
        return EstimateSchema().dump(payout_terms.terms_for(invoice, g.store, Pricing.of(settings()), now=utcnow())), False
    except Unavailable:
        return None, True


@bp.post("/invoices/<invoice_id>/cancel")
@requires("operate")
def cancel_invoice(invoice_id):
    invoice = invoices.get_for_store(g.store, invoice_id)
    invoices.cancel(invoice, ACTOR, now=utcnow(), provider=provider(),
                    timeout_seconds=settings().expiry_provider_timeout_seconds)
    note("invoice.cancel", target=invoice.public_id)
    flash("The invoice is cancelled.")
    return redirect(url_for("dashboard.invoice_page", invoice_id=invoice.public_id))


@bp.post("/invoices/<invoice_id>/refunds")
@requires("operate")
def refund_invoice(invoice_id):
    invoice = invoices.get_for_store(g.store, invoice_id)
    fields = form_fields(text=("amount", "reason", "asset", "refund_to"))
    refund = refunds.create_refund(invoice, ACTOR, load(RefundCreateSchema(), fields), provider(), now=utcnow())
    polling.request_poll("refunds")
    note("refund.create", target=refund.public_id, detail=f"{fields.get('amount')} {invoice.currency}")
    flash("Refund created: send the funds it asks for to start it.")
    return redirect(url_for("dashboard.refunds_page", invoice_id=invoice.public_id))


@bp.get("/refunds")
@requires("read")
def refunds_page():
    query = load(RefundListQuerySchema(), {**filled(("invoice_id", "status", "starting_after")),
                                           "limit": PAGE_SIZE})
    page = refunds.list_for_store(g.store, ACTOR, query, PageRequest.from_query(query))
    return render_template("dashboard/refunds.html", refunds=RefundSchema(many=True).dump(page.rows),
                           has_more=page.has_more, filters=query, sandbox=sandbox())


@bp.post("/refunds/<refund_id>/cancel")
@requires("operate")
def cancel_refund(refund_id):
    refund = refunds.get_for_store(g.store, refund_id, ACTOR)
    refunds.cancel(refund, ACTOR, provider(), now=utcnow(), timeout_seconds=settings().expiry_provider_timeout_seconds)
    note("refund.cancel", target=refund.public_id)
    flash("The refund is cancelled: its amount may be refunded again.")
    return redirect(url_for("dashboard.refunds_page"))
