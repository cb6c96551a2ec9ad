"""Event rows (the outbox) written with invoice changes, payload as docs/webhooks.md."""
import re

from models.events import Event
from models.invoices import Invoice
from tests.blueprints.assertions import TIMESTAMP


def created_invoice(client, auth):
    response = client.post("/v1/invoices", headers=auth,
                           json={"amount": "42.00", "external_order_id": "A-9", "metadata": {"k": "v"}})
    assert response.status_code == 201
    return response.get_json()["id"]


def test_create_writes_one_invoice_created_event_with_the_documented_payload(client, auth, store):
    invoice_id = created_invoice(client, auth)
    invoice_row = Invoice.get(Invoice.public_id == invoice_id)
    events = list(Event.select())
    assert [event.type for event in events] == ["invoice.created"]
    event = events[0]
    assert (event.store_id, event.invoice_id) == (store.id, invoice_row.id)
    assert event.dispatched_at is None
    assert event.created_at == invoice_row.created_at
    payload = event.payload
    assert set(payload) == {"id", "type", "api_version", "created_at", "livemode", "previous_status", "data"}
    assert payload["livemode"] is False          # the sandbox never passes for live money
    assert payload["previous_status"] is None    # set on invoice.paid only
    assert re.fullmatch(r"evt_[0-9a-f]{32}", payload["id"]) and payload["id"] == event.public_id
    assert payload["type"] == "invoice.created"
    assert payload["api_version"] == "1.0.0"
    assert TIMESTAMP.match(payload["created_at"])
    assert set(payload["data"]) == {"object"}
    assert payload["data"]["object"] == client.get(f"/v1/invoices/{invoice_id}", headers=auth).get_json()


def test_refused_create_writes_no_event(client, auth):
    client.post("/v1/invoices", headers=auth, json={"amount": "0"})
    client.post("/v1/invoices", headers=auth, json={"amount": "1.00", "currency": "GBP"})
    assert Event.select().count() == 0


def test_cancel_writes_an_invoice_cancelled_event_with_the_cancelled_invoice(client, auth):
    invoice_id = created_invoice(client, auth)
    cancelled = client.post(f"/v1/invoices/{invoice_id}/cancel", headers=auth).get_json()
    event = Event.get(Event.type == "invoice.cancelled")
    assert event.payload["type"] == "invoice.cancelled"
    assert event.payload["api_version"] == "1.0.0"
    assert event.payload["data"]["object"] == cancelled
    assert event.payload["data"]["object"] == client.get(f"/v1/invoices/{invoice_id}", headers=auth).get_json()
    assert event.payload["id"] != Event.get(Event.type == "invoice.created").payload["id"]
