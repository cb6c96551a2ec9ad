from flask import Blueprint, g

from blueprints.auth import requires_scope
from blueprints.requests import load_query
from infra.pagination import PageRequest
from schemas.common import page_envelope
from schemas.transactions import TransactionListQuerySchema, TransactionSchema
from services.engine import transactions

bp = Blueprint("transactions", __name__, url_prefix="/v1/transactions")


@bp.get("")
@requires_scope("transactions:read")
def list_transactions():
    query = load_query(TransactionListQuerySchema())
    page = transactions.list_for_store(g.store, query, PageRequest.from_query(query))
    return page_envelope(page, TransactionSchema(many=True).dump(page.rows))


@bp.get("/<transaction_id>")
@requires_scope("transactions:read")
def get_transaction(transaction_id):
    return TransactionSchema().dump(transactions.get_for_store(g.store, transaction_id))


@bp.get("/by-hash/<path:transaction_hash>")
@requires_scope("transactions:read")
def get_transaction_by_hash(transaction_hash):
    return TransactionSchema().dump(transactions.get_by_hash(g.store, transaction_hash))
