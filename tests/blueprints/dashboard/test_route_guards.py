"""Guards that hold on every route of the dashboard, found by walking the app's URL map so that a
route added later is covered without a new test: a POST without its CSRF token is refused, another
store's id is a 404, a viewer changes nothing (403), and every answer carries a strict
Content-Security-Policy."""
from __future__ import annotations

import pytest

from blueprints.pages import PAGE_CSP
from models.payment_links import PaymentLink
from models.people import AuditEntry, Invitation
from models.refunds import Refund
from models.stores import ApiKey
from models.webhooks import WebhookEndpoint
from tests.support.dashboard import csrf_token, make_member, post, sign_in
from tests.support.dashboard_world import build_world, dashboard_rules, paths_of

# POSTs about the signed-in person, not the store: signing in and out, the invitation and reset
# links, choosing a store, confirming the password, a new password, TOTP. Every other POST changes
# the store, and a viewer must be refused it.
SELF_SERVICE = {"dashboard.login", "dashboard.logout", "dashboard.invitation", "dashboard.password_reset",
                "dashboard.password_reset_link", "dashboard.stores", "dashboard.confirm", "dashboard.account",
                "dashboard.totp"}
# URL arguments naming a store's object; tests/support/dashboard_world.py makes one of each.
ID_ARGUMENTS = ("invoice_id", "link_id", "refund_id", "endpoint_id", "delivery_id", "key_id", "user_id", "platform")
# Not ids: the choices of an any() converter, and the links' secret token (tests/…/test_invitations.py).
OTHER_ARGUMENTS = {"change", "kind", "token"}
# What a form might carry, so that a POST let through would change something.
FORM = {"name": "Hijacked", "wallet": "thief.near", "email": "thief@example.com", "role": "owner",
        "amount": "1.00", "title": "Hijacked", "amount_mode": "fixed_amount", "currency": "USD",
        "url": "https://thief.example.test/", "events": "*", "recipients": "thief@example.com",
        "kinds": "payment_received", "require": "1", "scopes": "invoices:read", "public_visible": "on"}


def _counts() -> dict:
    return {model.__name__: model.select().count()
            for model in (ApiKey, WebhookEndpoint, PaymentLink, Invitation, Refund, AuditEntry)}


def test_every_route_argument_is_an_id_these_tests_fill(app):
    """A route naming a new kind of object needs one in dashboard_world, or the walks below skip it."""
    names = {name for method in ("GET", "POST") for rule in dashboard_rules(app, method) for name in rule.arguments}
    assert names <= set(ID_ARGUMENTS) | OTHER_ARGUMENTS, names - set(ID_ARGUMENTS) - OTHER_ARGUMENTS


def test_the_self_service_posts_are_the_ones_open_before_a_store_is_chosen(app):
    from blueprints.dashboard import session_state

    open_before = session_state.PUBLIC_ENDPOINTS | session_state.STORELESS_ENDPOINTS
    posts = {rule.endpoint for rule in dashboard_rules(app, "POST")}
    assert SELF_SERVICE == open_before & posts


def test_every_post_without_its_csrf_token_or_with_another_sessions_is_refused(app, owner_client, store):
    world = build_world(store, member_email="member@example.com")
    before, counts = world.snapshot(), _counts()
    stranger = app.test_client()
    foreign_token = csrf_token(stranger)
    paths = paths_of(app, dashboard_rules(app, "POST"), {**world.ids, "token": "some-token"})
    assert len(paths) >= 30
    for path in paths:
        for form in (FORM, {**FORM, "csrf_token": foreign_token}):
            answer = owner_client.post(path, data=form)
            assert answer.status_code == 400, (path, answer.status_code)
            assert "did not come from this page" in answer.get_data(as_text=True), path
    assert world.snapshot() == before and _counts() == counts
    assert owner_client.get("/dashboard/").status_code == 200          # the refused logout kept the session


@pytest.mark.parametrize("argument", ID_ARGUMENTS)
def test_another_stores_id_is_a_404_on_every_route_that_takes_one(app, owner_client, other_store, argument):
    theirs = build_world(other_store, member_email="them@example.com")
    before, counts = theirs.snapshot(), _counts()
    for method in ("GET", "POST"):
        rules = [rule for rule in dashboard_rules(app, method) if argument in rule.arguments]
        assert rules or method == "GET", f"no route takes {argument}"
        for path in paths_of(app, rules, theirs.ids):
            answer = owner_client.get(path) if method == "GET" else post(owner_client, path, FORM)
            assert answer.status_code == 404, (method, path, answer.status_code)
            assert "belongs to another store" in answer.get_data(as_text=True), path
    assert theirs.snapshot() == before and _counts() == counts


def test_a_viewer_is_refused_every_change_with_a_403(app, client, store):
    world = build_world(store, member_email="member@example.com")
    make_member(store, "viewer@example.com", "viewer")
    sign_in(client, "viewer@example.com")
    before, counts = world.snapshot(), _counts()
    changes = [rule for rule in dashboard_rules(app, "POST") if rule.endpoint not in SELF_SERVICE]
    paths = paths_of(app, changes, world.ids)
    assert len(paths) >= 25
    for path in paths:
        answer = post(client, path, FORM)
        assert answer.status_code == 403, (path, answer.status_code)
        assert "Your role (viewer) cannot do this" in answer.get_data(as_text=True), path
    assert world.snapshot() == before and _counts() == counts


def _strict(policy: str) -> bool:
    directives = dict((part.strip().split(" ", 1) + [""])[:2] for part in policy.split(";") if part.strip())
    loose = ("'unsafe-inline'", "'unsafe-eval'", "*", "data:", "http:", "https:")
    return (directives.get("default-src") == "'none'" and directives.get("frame-ancestors") == "'none'"
            and directives.get("base-uri") == "'none'" and "form-action" in directives
            and not any(word in value.split() for value in directives.values() for word in loose))


def test_every_dashboard_answer_carries_the_pages_strict_policy(app, client, owner_client, store, other_store):
    assert _strict(PAGE_CSP)
    world = build_world(store, member_email="member@example.com")
    theirs = build_world(other_store, member_email="them@example.com")
    answers = {path: owner_client.get(path) for path in paths_of(app, dashboard_rules(app, "GET"),
                                                                  {**world.ids, "token": "unknown"})}
    answers["404 page"] = owner_client.get(f"/dashboard/invoices/{theirs.ids['invoice_id']}")
    answers["400 page"] = owner_client.post("/dashboard/logout")
    answers["redirect"] = owner_client.post("/dashboard/logout", data={"csrf_token": csrf_token(owner_client, "/dashboard/")})
    answers["signed out"] = client.get("/dashboard/invoices")
    answers["login page"] = client.get("/dashboard/login")
    make_member(store, "viewer@example.com", "viewer")
    viewer = app.test_client()
    sign_in(viewer, "viewer@example.com")
    answers["403 page"] = viewer.get("/dashboard/team")
    assert {answer.status_code for answer in answers.values()} >= {200, 302, 400, 403, 404}
    for name, answer in answers.items():
        assert answer.headers.get("Content-Security-Policy") == PAGE_CSP, (name, answer.status_code)
    unknown = client.get("/dashboard/no-such-page")         # no dashboard route: the app's own policy
    assert unknown.status_code == 404 and _strict(unknown.headers["Content-Security-Policy"])
