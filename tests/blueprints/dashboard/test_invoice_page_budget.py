"""Query budget of one invoice's dashboard page (docs/performance.md#dashboard-pages): at a million
invoices each query is a quick index scan, so the page's cost is its round trips. The page reads
the invoice once, its events with their deliveries in one query, its refunds with what each holds
in one (what is left to refund comes from them), and its transactions."""
from __future__ import annotations

from decimal import Decimal

from core.clock import utcnow
from models.base import db
from models.events import Event
from models.invoices import Invoice
from models.webhooks import WebhookDelivery
from services.webhooks import endpoints, outbox
from tests import factories
from tests.support.queries import counting_queries

SESSION_QUERIES = 2                               # the signed-in user and their memberships: every page


def _paid_invoice_with_a_delivery_and_refunds(store, *refund_statuses):
    with db.connection_context():
        endpoints.create_endpoint(store, {"url": "https://hooks.example.test/x", "events": ["*"], "name": "shop"},
                                  now=utcnow(), allow_private=True)
        invoice = factories.make_invoice(store, status="paid", paid_amount=Decimal("10.00"),
                                         received_amount=Decimal("10.00"))
        outbox.fan_out(Event.get(Event.invoice == invoice.id).id, now=utcnow())
        factories.make_transaction(invoice)
        for status in refund_statuses:
            factories.make_refund(invoice, amount=Decimal("4.00"), status=status)
    return Invoice.get_by_id(invoice.id)


def _page(owner_client, invoice):
    with counting_queries() as queries:
        page = owner_client.get(f"/dashboard/invoices/{invoice.public_id}")
    assert page.status_code == 200
    return page.get_data(as_text=True), queries


def test_the_invoice_page_makes_four_queries_of_its_own(owner_client, store):
    invoice = _paid_invoice_with_a_delivery_and_refunds(store, "succeeded", "failed")
    text, queries = _page(owner_client, invoice)
    assert len(queries.statements) <= SESSION_QUERIES + 4, "\n".join(queries.statements)
    assert queries.count("refund", "select") <= 2, queries.by_table()     # its list, the transactions' join
    delivery = WebhookDelivery.get()
    assert f"<code>{delivery.public_id}</code> invoice.created" in text
    assert text.count("4.00 USD: ") == 2 and "Create the refund" in text    # 10 received, 4 held: 6 left


def test_refunds_holding_everything_received_leave_nothing_to_refund(owner_client, store):
    invoice = _paid_invoice_with_a_delivery_and_refunds(store, "succeeded", "awaiting_funds", "processing")
    text, _queries = _page(owner_client, invoice)
    assert text.count("4.00 USD: ") == 3 and "Create the refund" not in text
