from functools import partial

from flask import Blueprint, g

from blueprints.auth import requires_scope
from blueprints.requests import listed
from schemas.transactions import TransactionListQuerySchema, TransactionSchema
from services.engine import transactions

bp = Blueprint("transactions", __name__, url_prefix="/v1/transactions")


@bp.get("")
@requires_scope("transactions:read")
def list_transactions():
    return listed(partial(transactions.list_for_store, g.store), TransactionSchema(many=True).dump,
                  TransactionListQuerySchema())


@bp.get("/<transaction_id>")
@requires_scope("transactions:read")
def get_transaction(transaction_id):
    return TransactionSchema().dump(transactions.get_for_store(g.store, transaction_id))


@bp.get("/by-hash/<path:transaction_hash>")
@requires_scope("transactions:read")
def get_transaction_by_hash(transaction_hash):
    return TransactionSchema().dump(transactions.get_by_hash(g.store, transaction_hash))
