"""A refund's funding that crosses its cancel (issue: a refund paid out twice): the cancel is
answered while the merchant's funding is on its way, the provider still delivers it, and the
books must say so, with no second refund of the same money. Through the API and the real pollers."""
import pytest

from tests.services.engine.test_refunds import fund, paid_invoice, refund
from tests.support.refund_books import assert_refund_books_agree
from tests.support.statement_oracle import roll_up_checked_after_each_test

roll_up_checked = pytest.fixture(autouse=True)(roll_up_checked_after_each_test)


def cancel(client, auth, refund_id):
    return client.post(f"/v1/refunds/{refund_id}/cancel", headers=auth)


def test_funding_that_crosses_a_cancel_is_delivered_once_and_shown(client, auth):
    invoice = paid_invoice(client, auth, amount="10.00")
    first = refund(client, auth, invoice["id"], "10.00").json
    # The provider has not seen the funding yet: the cancel is answered 200 ...
    assert cancel(client, auth, first["id"]).status_code == 200
    # ... and a second refund of the same money must wait: the first may still be funded and delivered.
    second = refund(client, auth, invoice["id"], "10.00")
    assert second.status_code == 400 and second.json["error"]["code"] == "refund_exceeds_refundable", second.json
    # The merchant's funding was on its way: the provider delivers it, and the refund says so.
    delivered = fund(client, auth, first["id"])
    assert delivered["status"] == "succeeded" and delivered["amount_out"] and delivered["transaction_hash"]
    assert client.get(f"/v1/invoices/{invoice['id']}", headers=auth).json["status"] == "refunded"
    assert assert_refund_books_agree(client, auth, invoice["id"]) == 10


def test_funding_seen_on_a_cancelled_refund_holds_its_amount_at_once(client, auth):
    """Seen (not yet delivered): the amount is taken from that moment, whatever the refund's state."""
    from models.base import db
    from models.refunds import Refund
    from services.engine import refunds as refund_service
    from tests.payflow import poll_until_quiet

    invoice = paid_invoice(client, auth, amount="10.00")
    first = refund(client, auth, invoice["id"], "10.00").json
    assert cancel(client, auth, first["id"]).status_code == 200
    assert client.post(f"/v1/test_helpers/refunds/{first['id']}/fund", json={}, headers=auth).status_code == 202
    poll_until_quiet("refunds", rounds=1)                            # one read: the provider saw the funding
    seen = client.get(f"/v1/refunds/{first['id']}", headers=auth).json
    assert seen["funding"]["received_amount"] == "10.00"
    assert seen["status"] == "processing"
    assert refund(client, auth, invoice["id"], "10.00").json["error"]["code"] == "refund_exceeds_refundable"
    with db.connection_context():
        assert refund_service.refundable_amount(Refund.get(Refund.public_id == first["id"]).invoice) == 0


def test_each_refund_guard_says_the_same_as_a_query_and_on_a_row_in_hand(store):
    """A refund move's own guard is written twice (a query condition for `move`, a row test for the
    one-write Answer); over every state the guards look at, both must agree."""
    from core.clock import utcnow
    from models.base import db
    from models.refunds import Refund
    from services.engine import refund_states
    from tests import factories

    now = utcnow()
    invoice = factories.make_invoice(store, status="paid")
    rows = [factories.make_refund(invoice, status=status, deposit_seen_at=seen, funding_closed_at=closed)
            for status in ("awaiting_funds", "processing", "cancelled", "expired")
            for seen in (None, now) for closed in (None, now)]
    with db.connection_context():
        for trigger, (condition, holds) in refund_states.GUARDS.items():
            for row in rows:
                in_sql = Refund.select().where((Refund.id == row.id) & condition()).exists()
                assert in_sql == holds(Refund.get_by_id(row.id)), (trigger, row.status)
