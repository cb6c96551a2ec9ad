"""models/inserts.py: the compiled-once INSERT writes what Model.create writes, on the test database."""
import datetime as dt
from decimal import Decimal

import pytest

from core import ids
from core.clock import utcnow
from models import compiled, inserts
from models.base import db
from models.events import Event
from models.invoices import Invoice
from tests import factories


@pytest.fixture
def store(app):
    return factories.make_store()


NOW = utcnow()


def _invoice(store, **over):
    now = NOW
    fields = dict(id=ids.new_uuid(), public_id=ids.new_public_id("inv_"), store=store.id,
                  amount=Decimal("12.345678901234567891"), currency="USD", order_amount=Decimal("12.34"),
                  order_currency="USD", output_asset=store.output_asset, metadata={"cart": "42", "ü": [1, 2]},
                  status="pending", created_at=now, updated_at=now, expires_at=now + dt.timedelta(hours=1))
    fields.update(over)
    return Invoice(**fields)


def _row(model, pk):
    return {name: value for name, value in model.get_by_id(pk).__data__.items()}


def test_the_row_matches_what_model_create_writes(store):
    with db.connection_context():
        ours = inserts.insert(_invoice(store))
        theirs = _invoice(store)
        Invoice.create(**theirs.__data__)
        written, expected = _row(Invoice, ours.id), _row(Invoice, theirs.id)
    for differing in ("id", "public_id"):
        written.pop(differing), expected.pop(differing)
    assert written == expected
    assert written["amount"] == Decimal("12.345678901234567891") and written["metadata"] == {"cart": "42", "ü": [1, 2]}


def test_the_sql_is_compiled_once_per_column_list_and_reused(store):
    compiled._texts.clear()
    with db.connection_context():
        for _ in range(3):
            inserts.insert(_invoice(store))
        inserts.insert(_invoice(store, customer_id="3f0c4a52-1b7e-4b2a-9c55-4d2f3c1e0a11"))
        assert Invoice.select().where(Invoice.store == store.id).count() == 4
    assert len([key for key in compiled._texts if key[:2] == ("insert", Invoice)]) == 2


def test_an_event_row_keeps_its_json_payload(store):
    with db.connection_context():
        invoice = inserts.insert(_invoice(store))
        event = inserts.insert(Event(id=ids.new_uuid(), public_id=ids.new_public_id("evt_"), store=store.id,
                                     invoice=invoice.id, type="invoice.created",
                                     payload={"data": {"object": {"id": invoice.public_id}}}, created_at=utcnow()))
        assert Event.get_by_id(event.id).payload == {"data": {"object": {"id": invoice.public_id}}}


def test_many_rows_are_written_as_insert_many_writes_them_and_compiled_once_per_count(store):
    compiled._texts.clear()
    with db.connection_context():
        invoice = inserts.insert(_invoice(store))

        def events(count):
            return [dict(id=ids.new_uuid(), public_id=ids.new_public_id("evt_"), store=store.id, invoice=invoice.id,
                         type="invoice.created", payload={"n": number, "ü": [1]}, created_at=NOW)
                    for number in range(count)]
        ours, theirs = events(3), events(3)
        assert inserts.insert_rows(Event, ours) == 3
        Event.insert_many(theirs).execute()
        for mine, peewees in zip(ours, theirs):
            written, expected = _row(Event, mine["id"]), _row(Event, peewees["id"])
            for differing in ("id", "public_id"):
                written.pop(differing), expected.pop(differing)
            assert written == expected
        assert inserts.insert_rows(Event, events(3)) == 3 and inserts.insert_rows(Event, events(2)) == 2
        assert inserts.insert_rows(Event, []) == 0
        assert Event.select().where(Event.invoice == invoice.id).count() == 11
    assert sorted(key[3] for key in compiled._texts if key[:2] == ("insert", Event)) == [2, 3]


def test_rows_naming_different_fields_are_refused_not_cut_to_the_first_rows_columns(store):
    # The multi-row INSERT takes its columns from the first row; a later row naming others would
    # lose them silently (a fan-out's claim columns were once dropped that way).
    def event(**over):
        return dict(id=ids.new_uuid(), public_id=ids.new_public_id("evt_"), store=store.id, type="invoice.created",
                    payload={}, created_at=NOW, **over)
    with db.connection_context():
        with pytest.raises(ValueError, match="same fields"):
            inserts.insert_rows(Event, [event(), event(dispatched_at=NOW)])
        assert Event.select().count() == 0
