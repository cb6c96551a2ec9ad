"""What the pages do, through the same service functions as the API: payment links, API keys."""
from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest

from blueprints.dashboard import api_key_pages
from core.clock import utcnow
from models.payment_links import PaymentLink
from models.people import AuditEntry
from models.stores import ApiKey
from tests import factories
from tests.blueprints.dashboard.conftest import SCRIPT
from tests.support.dashboard import PASSWORD, make_member, post, sign_in


def test_an_owner_makes_edits_and_deactivates_a_payment_link(owner_client):
    answer = post(owner_client, "/dashboard/payment-links/new", {
        "title": "Sunset print", "amount_mode": "fixed_amount", "amount": "25.00", "currency": "USD",
        "allow_multiple_payments": "on", "public_visible": "on"}, form_page="/dashboard/payment-links/new")
    assert answer.status_code == 302, answer.get_data(as_text=True)
    link = PaymentLink.get()
    assert (link.title, link.amount, link.allow_multiple_payments) == ("Sunset print", Decimal("25.00"), True)
    page = owner_client.get(f"/dashboard/payment-links/{link.public_id}")
    assert page.status_code == 200 and "/pay/plpub_" in page.get_data(as_text=True)
    post(owner_client, f"/dashboard/payment-links/{link.public_id}", {
        "title": "Sunset print, large", "amount_mode": "fixed_amount", "amount": "40.00", "public_visible": "on"})
    assert PaymentLink.get().title == "Sunset print, large" and not PaymentLink.get().allow_multiple_payments
    post(owner_client, f"/dashboard/payment-links/{link.public_id}/deactivate")
    assert PaymentLink.get().status == "inactive"
    actions = [entry.action for entry in AuditEntry.select().order_by(AuditEntry.id)]
    assert actions[-3:] == ["payment_link.create", "payment_link.update", "payment_link.deactivate"]
    assert owner_client.get(f"/dashboard/payment-links/{link.public_id}/qr.svg").mimetype == "image/svg+xml"


def test_a_payment_link_is_refused_by_the_apis_own_rules(owner_client):
    answer = post(owner_client, "/dashboard/payment-links/new", {"title": " ", "amount_mode": "fixed_amount",
                                                                 "amount": "abc"}, form_page="/dashboard/payment-links/new")
    assert answer.status_code == 400 and PaymentLink.select().count() == 0


def test_a_payment_links_title_is_escaped(owner_client, store):
    link = factories.make_payment_link(store, title=SCRIPT)
    for path in ("/dashboard/payment-links", f"/dashboard/payment-links/{link.public_id}",
                 f"/dashboard/payment-links/{link.public_id}/edit"):
        text = owner_client.get(path).get_data(as_text=True)
        assert SCRIPT not in text and "&lt;script&gt;" in text


def test_another_stores_link_is_a_404(owner_client, other_store):
    theirs = factories.make_payment_link(other_store)
    assert owner_client.get(f"/dashboard/payment-links/{theirs.public_id}").status_code == 404
    assert post(owner_client, f"/dashboard/payment-links/{theirs.public_id}/deactivate").status_code == 404
    assert PaymentLink.get_by_id(theirs.id).status == "active"


def test_a_new_api_key_is_shown_once_and_works(owner_client, client):
    answer = post(owner_client, "/dashboard/api-keys", {"scopes": ["invoices:read"]}, form_page="/dashboard/api-keys")
    raw = re.search(r'value="(sk_live_[0-9a-f]{40})"', answer.get_data(as_text=True)).group(1)
    assert ApiKey.get(ApiKey.kind == "standard", ApiKey.scopes == "invoices:read").last4 == raw[-4:]
    assert raw not in owner_client.get("/dashboard/api-keys").get_data(as_text=True)
    assert client.get("/v1/invoices", headers={"Authorization": f"Bearer {raw}"}).status_code == 200


def test_creating_a_key_asks_for_the_password_after_five_minutes(owner_client, monkeypatch):
    from blueprints.dashboard import session_state

    later = utcnow() + dt.timedelta(minutes=6)
    monkeypatch.setattr(session_state, "utcnow", lambda: later)
    answer = post(owner_client, "/dashboard/api-keys", form_page="/dashboard/api-keys")
    assert answer.status_code == 302 and "/dashboard/confirm" in answer.headers["Location"]
    assert ApiKey.select().count() == 0
    wrong = post(owner_client, "/dashboard/confirm", {"password": "nope", "next": "/dashboard/api-keys"},
                 form_page="/dashboard/confirm")
    assert wrong.status_code == 401
    right = post(owner_client, "/dashboard/confirm", {"password": PASSWORD, "next": "/dashboard/api-keys"},
                 form_page="/dashboard/confirm")
    assert right.headers["Location"].endswith("/dashboard/api-keys")
    assert post(owner_client, "/dashboard/api-keys", form_page="/dashboard/api-keys").status_code == 200
    assert ApiKey.select().count() == 1


def test_the_confirm_page_never_sends_anyone_to_another_site(owner_client):
    answer = post(owner_client, "/dashboard/confirm", {"password": PASSWORD, "next": "https://evil.example/"},
                  form_page="/dashboard/confirm")
    assert answer.headers["Location"].endswith("/dashboard/")


def test_a_key_of_another_store_cannot_be_revoked(owner_client, other_store):
    factories.make_key(other_store)
    theirs = ApiKey.get(ApiKey.store == other_store.id)
    assert post(owner_client, f"/dashboard/api-keys/{theirs.id}/revoke").status_code == 404
    assert ApiKey.get_by_id(theirs.id).revoked_at is None


def _key_row(page: str, key_id: str) -> str:
    return re.search(rf"<tr><td><code>{key_id}</code>.*?</tr>", page, re.S).group(0)


def test_the_keys_page_shows_when_each_key_was_last_used(owner_client, client, store):
    used, idle, older = (factories.make_key(store) for _ in range(3))
    assert client.get("/v1/invoices", headers={"Authorization": f"Bearer {used}"}).status_code == 200
    three_hours_ago = utcnow() - dt.timedelta(hours=3, minutes=5)
    ApiKey.update(last_used_at=three_hours_ago).where(ApiKey.last4 == older[-4:]).execute()
    page = owner_client.get("/dashboard/api-keys").get_data(as_text=True)
    rows = {raw: _key_row(page, ApiKey.get(ApiKey.last4 == raw[-4:]).id) for raw in (used, idle, older)}
    used_at = ApiKey.get(ApiKey.last4 == used[-4:]).last_used_at
    assert "within the last minute" in rows[used] and used_at.strftime("%Y-%m-%d %H:%M") + " UTC" in rows[used]
    assert "never" in rows[idle] and "ago" not in rows[idle]
    assert "3 hours ago" in rows[older] and three_hours_ago.strftime("%Y-%m-%d %H:%M") in rows[older]


@pytest.mark.parametrize("seconds, shown", [
    (0, "within the last minute"), (59, "within the last minute"), (-30, "within the last minute"),
    (61, "1 minute ago"), (59 * 60, "59 minutes ago"), (60 * 60, "1 hour ago"),
    (47 * 3600 + 3599, "47 hours ago"), (48 * 3600, "2 days ago"), (400 * 86400, "400 days ago"),
])
def test_last_use_reads_in_the_largest_whole_unit(seconds, shown):
    now = dt.datetime(2026, 11, 27, 12, 0)
    assert api_key_pages.ago(now - dt.timedelta(seconds=seconds), now=now) == shown


def test_a_viewer_sees_no_keys_and_cannot_make_one(client, store):
    make_member(store, "viewer@example.com", "viewer")
    sign_in(client, "viewer@example.com")
    assert client.get("/dashboard/api-keys").status_code == 403
    assert post(client, "/dashboard/api-keys").status_code == 403
    assert post(client, "/dashboard/payment-links/new", {"title": "x", "amount_mode": "fixed_amount", "amount": "1.00"}
                ).status_code == 403
    assert ApiKey.select().count() == 0 and PaymentLink.select().count() == 0
