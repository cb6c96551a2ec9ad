"""Plain functions that build rows through the same services the app uses."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

from core import ids
from core.clock import utcnow
from models.base import db
from models.invoices import Invoice
from models.polls import PollState
from models.refunds import Refund
from models.stores import Store
from models.transactions import Transaction
from services.accounts import api_keys, stores
from services.engine import invoice_states, poll_state, transactions


def make_store(*, name="Test shop", payout_wallet="merchant.near", **over) -> Store:
    with db.connection_context():
        return stores.create_store(name=name, payout_wallet=payout_wallet, now=utcnow(), **over)


def make_key(store: Store, *, kind="standard", scopes=None, now=None) -> str:
    with db.connection_context():
        _key, raw = api_keys.issue_key(store, kind=kind, scopes=scopes, now=now or utcnow())
    return raw


def make_invoice(store: Store, *, now: dt.datetime | None = None, **over) -> Invoice:
    now = now or utcnow()
    fields = dict(
        id=ids.new_uuid(), public_id=ids.new_public_id("inv_"), store=store.id, amount=Decimal("10.00"),
        currency="USD", order_amount=Decimal("10.00"), order_currency="USD", output_asset=store.output_asset,
        expires_at=now + dt.timedelta(hours=1),
    )
    fields.update(over)
    status = fields.pop("status", None)
    next_poll = fields.pop("next_poll_at", None)     # kept in its own row: models/polls.py
    with db.connection_context():
        invoice = invoice_states.create(now=now, **fields)
        if status and status != "pending":
            Invoice.update(status=status).where(Invoice.id == invoice.id).execute()
            invoice = Invoice.get_by_id(invoice.id)
        if next_poll is not None:
            make_poll_state(invoice, next_poll)
    return invoice


def make_poll_state(invoice: Invoice, next_poll_at: dt.datetime, *, phase: str | None = None) -> PollState:
    """The invoice's poll state, due at `next_poll_at`, with the poller its status belongs to."""
    with db.connection_context():
        return PollState.create(id=invoice.id, invoice=invoice.id, phase=phase or poll_state.phase_of(invoice) or "chain",
                                next_poll_at=next_poll_at,
                                watch_until=invoice.expires_at + poll_state.WATCH_AFTER_DEADLINE)


def make_transaction(invoice: Invoice, *, now: dt.datetime | None = None, **over) -> Transaction:
    now = now or utcnow()
    fields = dict(
        id=ids.new_uuid(), public_id=ids.new_public_id("txn_"), store=invoice.store_id,
        type="payment_origin", network="eth", token="usdc.eth", amount=Decimal("10.000001"),
        transaction_hash="0x" + ids.new_public_id("")[:64].ljust(64, "0"), from_wallet="0xbuyer",
        to_wallet="0xdeposit", confirmations=12, status="confirmed", verified=True, confirmed_at=now,
        created_at=now, updated_at=now,
    )
    fields.update(over)
    with db.connection_context(), db.atomic():
        # As the engine writes one: with its share of the settlement statement's roll-up.
        return transactions.insert(Invoice.get_by_id(invoice.id), **fields)


def make_payment_link(store: Store, *, now: dt.datetime | None = None, **over):
    """A link through the same service the API uses; `over` is the create body (Decimals for amounts)."""
    from services import payment_links

    data = dict(title="T-shirt", amount_mode="fixed_amount", amount=Decimal("25.00"), currency="USD",
                allow_multiple_payments=True, public_visible=True)
    data.update(over)
    with db.connection_context():
        return payment_links.create_link(store, data, now=now or utcnow(), supported_currencies=("USD", "EUR"))


def make_refund(invoice: Invoice, *, now: dt.datetime | None = None, **over) -> Refund:
    """A refund row as the refund service writes one (no provider asked), `awaiting_funds` unless told."""
    now = now or utcnow()
    fields = dict(
        id=ids.new_uuid(), public_id=ids.new_public_id("ref_"), store=invoice.store_id, invoice=invoice.id,
        status="awaiting_funds", amount=Decimal("5.00"), currency=invoice.currency, asset="usdc.eth",
        refund_to="0x" + "b" * 40, estimated_amount_out=Decimal("4.975"), funding_asset=invoice.output_asset,
        funding_amount=Decimal("5.00"), deposit_address="sandbox-" + ids.new_public_id("")[:16],
        expires_at=now + dt.timedelta(hours=1), quoted_at=now, created_at=now, updated_at=now,
    )
    fields.update(over)
    with db.connection_context():
        return Refund.create(**fields)
