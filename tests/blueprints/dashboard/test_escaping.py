"""Nothing a merchant (or a visitor) typed is rendered as markup: every field holds a script naming
the field, every dashboard page is read, and each field must appear escaped where it is shown and
never as it was typed anywhere."""
from __future__ import annotations

from markupsafe import escape

from core.clock import utcnow
from models.base import db
from models.people import Invitation
from services.accounts import people
from tests.support.dashboard import csrf_token, make_member, post, sign_in
from tests.support.dashboard_world import build_world, dashboard_rules, mark, paths_of

# Each field, and the pages that show it (a field shown nowhere yet is still checked on every page).
SHOWN_ON = {
    "store name": ("/dashboard/", "/dashboard/settings", "/dashboard/stores", "invitation"),
    "external_order_id": ("/dashboard/invoices", "invoice"),
    "metadata key": ("invoice",), "metadata value": ("invoice",),
    "payment link title": ("/dashboard/payment-links", "payment link", "payment link edit"),
    "endpoint name": ("/dashboard/webhooks", "endpoint"),
    "endpoint url": ("/dashboard/webhooks", "endpoint", "delivery"),
    "response excerpt": ("delivery",), "attempt error": ("delivery",),
    "member email": ("/dashboard/team",),
    "installation site url": ("/dashboard/integrations",), "installation webhook url": ("/dashboard/integrations",),
    "plugin version": ("/dashboard/integrations",),
    "audit target": ("/dashboard/audit",), "audit detail": ("/dashboard/audit",),
    "invited email": ("invitation",),
    "login email": ("login refused",), "search": ("invoice search",), "next": ("confirm",),
    "new link title": ("payment link refused",), "new endpoint name": ("endpoint refused",),
    "refund reason": (), "paid external_order_id": ("/dashboard/invoices",), "endpoint disabled reason": (),
}


def _pages(app, client, world) -> dict:
    """Every page a signed-in owner reads, by a name SHOWN_ON uses."""
    ids = world.ids
    pages = {path: client.get(path) for path in paths_of(app, dashboard_rules(app, "GET"), {**ids, "token": "x"})
             if "<" not in path}
    named = {"invoice": f"/dashboard/invoices/{ids['invoice_id']}", "payment link": f"/dashboard/payment-links/{ids['link_id']}",
             "payment link edit": f"/dashboard/payment-links/{ids['link_id']}/edit",
             "endpoint": f"/dashboard/webhooks/{ids['endpoint_id']}",
             "delivery": f"/dashboard/webhooks/deliveries/{ids['delivery_id']}"}
    pages.update({name: pages[path] for name, path in named.items()})
    pages["invoice search"] = client.get("/dashboard/invoices", query_string={"q": mark("search")})
    pages["confirm"] = client.get("/dashboard/confirm", query_string={"next": "/dashboard/" + mark("next")})
    pages["payment link refused"] = post(client, "/dashboard/payment-links/new", {
        "title": mark("new link title"), "amount_mode": "fixed_amount", "amount": "not a number"})
    pages["endpoint refused"] = post(client, "/dashboard/webhooks", {"name": mark("new endpoint name"), "url": "ftp://x"})
    return pages


def test_script_in_every_merchant_typed_field_is_escaped_on_every_page(app, client, store, other_store):
    world = build_world(store, member_email="member@example.com", marked=True)
    make_member(store, "owner@example.com", "owner")
    make_member(other_store, "owner@example.com", "viewer")           # two stores: the picker lists both
    sign_in(client, "owner@example.com")
    stores = client.get("/dashboard/stores")
    post(client, "/dashboard/stores", {"store_id": str(store.id)}, form_page="/dashboard/stores")
    pages = {**_pages(app, client, world), "/dashboard/stores": stores}
    with db.connection_context():
        token = people.invite(store, "invited@example.com", "viewer", now=utcnow())
    Invitation.update(email=mark("invited email")).execute()
    stranger = app.test_client()
    pages["invitation"] = stranger.get(f"/dashboard/invitations/{token}")
    pages["login refused"] = stranger.post("/dashboard/login", data={
        "email": mark("login email"), "password": "x", "csrf_token": csrf_token(stranger)})
    html = {name: answer.get_data(as_text=True) for name, answer in pages.items() if answer.mimetype == "text/html"}
    assert len(html) >= 25 and all(answer.status_code < 500 for answer in pages.values())
    for name, text in html.items():
        assert "<script>alert(" not in text, name
    for field, shown_on in SHOWN_ON.items():
        for name in shown_on:
            assert str(escape(mark(field))) in html[name], (field, name)
