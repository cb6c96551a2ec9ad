"""Two refunds of one invoice delivered at the same moment (the refund poller answers a batch in
several threads): both count on the invoice, and neither waits on the other in a cycle. On
PostgreSQL a delivery's event row took a key share on the invoice before its row lock, so two such
deliveries deadlocked and the poll job failed (found on the real stack)."""
from __future__ import annotations

from decimal import Decimal
import os
import threading
import time
import uuid

import pytest

from core.clock import utcnow
from models.base import db
from models.invoices import Invoice
from models.refunds import Refund
from providers import base
from providers.base import DepositStatus
from services.engine import refund_answers
from tests import factories
from tests.support.concurrency import run_at_once

ON_POSTGRES = os.environ.get("TEST_DATABASE_URL", "").startswith("postgres")


def _processing_refunds(store, count: int) -> tuple[Invoice, list[Refund]]:
    now = utcnow()
    invoice = factories.make_invoice(store, status="paid", paid_amount=Decimal("10.00"),
                                     received_amount=Decimal("10.00"), origin_asset="usdc.eth",
                                     refund_to="0x" + "b" * 40)
    refunds = [factories.make_refund(invoice, status="processing", deposit_seen_at=now,
                                     funded_amount=Decimal("5.00"), provider_status=base.PROCESSING)
               for _ in range(count)]
    return invoice, refunds


def _delivered(refund: Refund) -> DepositStatus:
    return DepositStatus(status=base.SUCCESS, amount_in=refund.funding_amount, amount_out=Decimal("4.97"),
                         destination_tx_hashes=("0x" + uuid.uuid4().hex * 2,))


def _deliver(refund: Refund, errors: list) -> None:
    try:
        with db.connection_context():
            refund_answers.apply_funding_status(refund, _delivered(refund), now=utcnow())
    except Exception as error:  # noqa: BLE001 - the test reports it
        errors.append(error)


def test_two_deliveries_of_one_invoice_both_count(store):
    invoice, refunds = _processing_refunds(store, 2)
    errors: list = []
    pending = list(refunds)           # each thread takes one (list.pop is atomic)
    assert run_at_once(lambda: _deliver(pending.pop(), errors), len(refunds)) == []
    assert errors == []
    with db.connection_context():
        assert {r.status for r in Refund.select().where(Refund.invoice == invoice.id)} == {"succeeded"}
        after = Invoice.get_by_id(invoice.id)
    assert after.refunded_amount == Decimal("10.00") and after.status == "refunded"


def _waiting_on_a_lock(deadline: float) -> bool:
    while time.monotonic() < deadline:
        with db.connection_context():
            waiting = db.execute_sql("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                     "AND wait_event_type = 'Lock'").fetchone()[0]
        if waiting:
            return True
        time.sleep(0.02)
    return False


@pytest.mark.skipif(not ON_POSTGRES, reason="row locks and their key shares are PostgreSQL's")
def test_a_delivery_locks_its_invoice_before_writing_rows_that_point_at_it(store):
    """Another transaction holds a key share on the invoice (as a row pointing at it does) and then
    asks for the invoice's row lock, as another delivery did: the delivery waits for it instead of
    holding a key share of its own that closes a cycle."""
    invoice, (refund,) = _processing_refunds(store, 1)
    held, go_on = threading.Event(), threading.Event()
    holder_errors: list = []

    def other_writer():
        try:
            with db.connection_context(), db.atomic():
                db.execute_sql("SELECT 1 FROM invoice WHERE id = %s FOR KEY SHARE", (invoice.id.hex,))
                held.set()
                go_on.wait(timeout=20)
                db.execute_sql("SELECT 1 FROM invoice WHERE id = %s FOR UPDATE", (invoice.id.hex,))
        except Exception as error:  # noqa: BLE001 - the test reports it
            holder_errors.append(error)

    holder = threading.Thread(target=other_writer)
    holder.start()
    assert held.wait(timeout=10)
    errors: list = []
    delivery = threading.Thread(target=_deliver, args=(refund, errors))
    delivery.start()
    assert _waiting_on_a_lock(time.monotonic() + 10)      # the delivery waits on the holder
    go_on.set()
    holder.join(timeout=30)
    delivery.join(timeout=30)
    assert holder_errors == [] and errors == []
    with db.connection_context():
        assert Refund.get_by_id(refund.id).status == "succeeded"
        assert Invoice.get_by_id(invoice.id).refunded_amount == Decimal("5.00")
