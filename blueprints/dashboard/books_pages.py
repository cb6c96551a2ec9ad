"""Books and storefront installations in the dashboard: the settlement statement and the CSV
exports (the same queries and streams as /v1/reports and /v1/exports), and each installation's
status with disconnect (as /v1/integration/…)."""
from __future__ import annotations

import datetime as dt

from flask import flash, g, redirect, render_template, request, url_for

from blueprints.dashboard import bp
from blueprints.dashboard.forms import filled
from blueprints.dashboard.session_state import note, requires
from blueprints.exports import stream_export
from blueprints.requests import load
from core.clock import utcnow
from core.errors import NotFound
from core.platforms import PLATFORM_NAMES, PLATFORMS
from schemas.exports import InvoiceExportQuerySchema, SettlementReportQuerySchema, TransactionExportQuerySchema
from services import integrations
from services.books import exports, reports

DEFAULT_DAYS = 30


@bp.get("/books")
@requires("read")
def books_page():
    today = utcnow().date()
    chosen = {"from": (today - dt.timedelta(days=DEFAULT_DAYS - 1)).isoformat(), "to": today.isoformat(),
              **filled(("from", "to"))}
    query = load(SettlementReportQuerySchema(), chosen)
    return render_template("dashboard/books.html", rows=reports.settlement_statement(g.store, query["from_"], query["to"]),
                           chosen=chosen)


@bp.get("/books/<any(invoices, transactions):kind>.csv")
@requires("read")
def books_export(kind):
    """Whole UTC days, `from` to `to` inclusive, as the export routes' created_after/created_before."""
    day = load(SettlementReportQuerySchema(), {"from": request.args.get("from", ""), "to": request.args.get("to", "")})
    schema = InvoiceExportQuerySchema() if kind == "invoices" else TransactionExportQuerySchema()
    query = load(schema, {"created_after": f"{day['from_'].isoformat()}T00:00:00Z",
                          "created_before": f"{(day['to'] + dt.timedelta(days=1)).isoformat()}T00:00:00Z"})
    export = exports.invoice_export(g.store, query) if kind == "invoices" else exports.transaction_export(g.store, query)
    return stream_export(kind, export, query)


@bp.get("/integrations")
@requires("read")
def integrations_page():
    return render_template("dashboard/integrations.html", names=PLATFORM_NAMES,
                           installations=[(platform, integrations.status(g.store, platform)) for platform in PLATFORMS])


@bp.post("/integrations/<platform>/disconnect")
@requires("operate")
def disconnect_integration(platform):
    if platform not in PLATFORMS:
        raise NotFound("integration_not_found", "No such installation.")
    integrations.disconnect(g.store, platform, now=utcnow())
    note("integration.disconnect", target=platform)
    flash("Disconnected: the storefront's keys stop working within a second.")
    return redirect(url_for("dashboard.integrations_page"))
