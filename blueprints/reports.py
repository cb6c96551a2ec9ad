"""Reports: GET /v1/reports/settlements, the daily settlement statement (docs/exports.md)."""
from flask import Blueprint, g

from blueprints.auth import requires_scope
from blueprints.requests import load_query
from schemas.exports import SettlementReportQuerySchema, SettlementStatementSchema
from services.books import reports

bp = Blueprint("reports", __name__, url_prefix="/v1/reports")


@bp.get("/settlements")
@requires_scope("transactions:read")
def settlement_statement():
    query = load_query(SettlementReportQuerySchema())
    rows = reports.settlement_statement(g.store, query["from_"], query["to"])
    return SettlementStatementSchema().dump({"from_": query["from_"], "to": query["to"], "data": rows})
