"""Books (the statement, CSV exports) and storefront installations in the dashboard."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal


from core.clock import utcnow
from models.integrations import Integration
from models.settlement_days import SettlementDay
from tests import factories
from tests.blueprints.dashboard.conftest import SCRIPT
from tests.support.dashboard import make_member, post, sign_in


def _paid_today(store, amount="12.50", currency="USD", *, today=None):
    SettlementDay.create(store=store.id, day=today or utcnow().date(), currency=currency, invoices_paid=1,
                         gross_paid=Decimal(amount), movements=1)


def test_home_counts_today_and_the_week_per_currency_from_the_roll_up(owner_client, store, other_store, monkeypatch):
    from blueprints.dashboard import home

    now = utcnow()      # the page's "today" too: a UTC midnight between the rows and the page moved the week
    monkeypatch.setattr(home, "utcnow", lambda: now)
    today = now.date()
    _paid_today(store, today=today)
    _paid_today(store, "1500", "JPY", today=today)
    SettlementDay.create(store=store.id, day=today - dt.timedelta(days=3), currency="USD", invoices_paid=2,
                         gross_paid=Decimal("7.50"), movements=2)
    SettlementDay.create(store=store.id, day=today - dt.timedelta(days=7), currency="USD", invoices_paid=9,
                         gross_paid=Decimal("900.00"), movements=9)         # eight days ago: not in the week
    _paid_today(other_store, "999.00", today=today)
    text = owner_client.get("/dashboard/").get_data(as_text=True)
    assert "12.50" in text and "20.00" in text and "1500" in text
    assert "999.00" not in text and "912.50" not in text and "920.00" not in text


def test_the_statement_and_the_csv_exports(owner_client, store):
    invoice = factories.make_invoice(store, external_order_id="order-77")
    _paid_today(store)
    page = owner_client.get("/dashboard/books").get_data(as_text=True)
    assert "12.50" in page and "invoices (CSV)" in page
    today = invoice.created_at.date().isoformat()       # the invoice's day, even when a UTC midnight has passed
    export = owner_client.get("/dashboard/books/invoices.csv", query_string={"from": today, "to": today})
    assert export.status_code == 200 and export.mimetype == "text/csv"
    assert invoice.public_id in export.get_data(as_text=True) and "order-77" in export.get_data(as_text=True)
    assert "attachment" in export.headers["Content-Disposition"]
    refused = owner_client.get("/dashboard/books/invoices.csv", query_string={"from": "nope", "to": today})
    assert refused.status_code == 400


def test_an_installation_shows_and_disconnects(owner_client, client, store):
    key = factories.make_key(store, kind="bootstrap")
    connected = client.post("/v1/integration/woocommerce/connect", headers={"Authorization": f"Bearer {key}"},
                            json={"site_url": "https://shop.example.com", "webhook_url": "https://shop.example.com/hook"})
    assert connected.status_code == 200, connected.get_data(as_text=True)
    Integration.update(plugin_version=SCRIPT).execute()
    page = owner_client.get("/dashboard/integrations").get_data(as_text=True)
    assert "https://shop.example.com" in page and SCRIPT not in page and "&lt;script&gt;" in page
    assert "<h2 id=\"platform-1\">WooCommerce</h2>" in page
    assert post(owner_client, "/dashboard/integrations/woocommerce/disconnect",
                form_page="/dashboard/integrations").status_code == 302
    assert Integration.get().status == "disconnected"


def test_a_viewer_cannot_disconnect(client, store):
    make_member(store, "viewer@example.com", "viewer")
    sign_in(client, "viewer@example.com")
    assert client.get("/dashboard/integrations").status_code == 200
    assert post(client, "/dashboard/integrations/woocommerce/disconnect").status_code == 403
