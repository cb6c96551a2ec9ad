"""Exports: /v1/exports/invoices and /v1/exports/transactions, streamed (docs/exports.md)."""
from flask import Blueprint, Response, g, stream_with_context

from blueprints.auth import requires_scope
from blueprints.requests import load_query
from schemas.exports import InvoiceExportQuerySchema, TransactionExportQuerySchema
from services.books import exports

bp = Blueprint("exports", __name__, url_prefix="/v1/exports")


def stream_export(kind: str, export: exports.Export, query: dict) -> Response:
    file_format = query["format"]
    response = Response(stream_with_context(exports.chunks(export, file_format)),
                        content_type=exports.MEDIA_TYPES[file_format])
    response.headers["Content-Disposition"] = \
        f'attachment; filename="{exports.file_name(kind, query, file_format)}"'
    return response


@bp.get("/invoices")
@requires_scope("invoices:read")
def export_invoices():
    query = load_query(InvoiceExportQuerySchema())
    return stream_export("invoices", exports.invoice_export(g.store, query), query)


@bp.get("/transactions")
@requires_scope("transactions:read")
def export_transactions():
    query = load_query(TransactionExportQuerySchema())
    return stream_export("transactions", exports.transaction_export(g.store, query), query)
