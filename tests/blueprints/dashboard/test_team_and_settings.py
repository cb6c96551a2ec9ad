"""The team, the settings and the audit log: owners' pages, each change written to the log."""
from __future__ import annotations

import re

import pytest

from core.clock import utcnow
from models.people import AuditEntry, Membership, User
from models.stores import Store
from tests.blueprints.dashboard.conftest import SCRIPT
from tests.support.dashboard import csrf_token, make_member, post, sign_in


def test_an_owner_invites_a_viewer_who_reads_and_cannot_change(app, owner_client, store):
    answer = post(owner_client, "/dashboard/team", {"email": "books@example.com", "role": "viewer"},
                  form_page="/dashboard/team")
    link = re.search(r'value="(http://tender.test/dashboard/invitations/[^"]+)"', answer.get_data(as_text=True)).group(1)
    viewer = app.test_client()
    path = link.removeprefix("http://tender.test")
    viewer.post(path, data={"password": "bookkeeper pass", "password_again": "bookkeeper pass",
                            "csrf_token": csrf_token(viewer, path)})
    assert viewer.get("/dashboard/settings").status_code == 200
    for page in ("/dashboard/team", "/dashboard/audit", "/dashboard/api-keys"):
        assert viewer.get(page).status_code == 403
    assert post(viewer, "/dashboard/settings/name", {"name": "Hijacked"}).status_code == 403
    assert post(viewer, "/dashboard/settings/payout-wallet", {"wallet": "thief.near"}).status_code == 403
    assert Store.get_by_id(store.id).name == "Test shop"


def test_an_admin_cannot_touch_the_team_or_the_payout_wallet(client, store):
    make_member(store, "admin@example.com", "admin")
    sign_in(client, "admin@example.com")
    assert client.get("/dashboard/team").status_code == 403
    assert post(client, "/dashboard/team", {"email": "x@example.com", "role": "owner"}).status_code == 403
    assert post(client, "/dashboard/settings/payout-wallet", {"wallet": "thief.near"}).status_code == 403
    assert post(client, "/dashboard/settings/name", {"name": "New name"}).status_code == 302
    assert Store.get_by_id(store.id).name == "New name" and Store.get_by_id(store.id).payout_wallet == "merchant.near"


def test_an_owner_sets_the_wallet_through_the_wallet_rule(owner_client, store):
    refused = post(owner_client, "/dashboard/settings/payout-wallet", {"wallet": "not a wallet!"},
                   form_page="/dashboard/settings")
    assert refused.status_code == 400 and Store.get_by_id(store.id).payout_wallet == "merchant.near"
    assert post(owner_client, "/dashboard/settings/payout-wallet", {"wallet": "shop.near"},
                form_page="/dashboard/settings").status_code == 302
    assert Store.get_by_id(store.id).payout_wallet == "shop.near"


def test_a_removed_member_is_signed_out_at_once(app, owner_client, store):
    make_member(store, "leaver@example.com", "admin")
    leaver = app.test_client()
    sign_in(leaver, "leaver@example.com")
    user = User.get(User.email == "leaver@example.com")
    assert post(owner_client, f"/dashboard/team/{user.id}/remove", form_page="/dashboard/team").status_code == 302
    assert leaver.get("/dashboard/").status_code == 302
    assert not Membership.select().where(Membership.user == user.id).exists()


def test_the_last_owner_cannot_be_removed(app, owner_client, store):
    make_member(store, "other-owner@example.com", "owner")
    other = app.test_client()
    sign_in(other, "other-owner@example.com")
    me = User.get(User.email == "owner@example.com")
    post(other, f"/dashboard/team/{me.id}/remove", form_page="/dashboard/team")
    other_user = User.get(User.email == "other-owner@example.com")
    refused = post(other, f"/dashboard/team/{other_user.id}/remove", form_page="/dashboard/team")
    assert refused.status_code == 400 and Membership.select().where(Membership.store == store.id).count() == 1


def test_every_change_is_in_the_audit_log_that_owners_read(owner_client, store):
    post(owner_client, "/dashboard/settings/name", {"name": "Corner shop"}, form_page="/dashboard/settings")
    post(owner_client, "/dashboard/settings/notifications", {"recipients": "me@example.com", "kinds": ["payment_received"]},
         form_page="/dashboard/settings")
    entry = AuditEntry.select().order_by(AuditEntry.id.desc()).get()
    assert (entry.actor, entry.action, entry.address) == ("owner@example.com", "store.notifications", "127.0.0.1")
    page = owner_client.get("/dashboard/audit").get_data(as_text=True)
    assert "store.rename" in page and "Corner shop" in page and "store.notifications" in page


def test_a_store_name_and_an_invited_address_are_escaped(owner_client, store):
    Store.update(name=SCRIPT).where(Store.id == store.id).execute()
    make_member(store, "x@example.com", "viewer")
    for path in ("/dashboard/", "/dashboard/settings", "/dashboard/team", "/dashboard/stores"):
        text = owner_client.get(path).get_data(as_text=True)
        assert SCRIPT not in text, path


def test_an_owner_may_require_totp_of_everyone(app, owner_client, store):
    make_member(store, "member@example.com", "developer")
    post(owner_client, "/dashboard/settings/totp", {"require": "1"}, form_page="/dashboard/settings")
    member = app.test_client()
    sign_in(member, "member@example.com")
    answer = member.get("/dashboard/invoices")
    assert answer.status_code == 302 and answer.headers["Location"].endswith("/dashboard/account/totp")


def _role(store, email):
    return Membership.get((Membership.store == store.id) & (Membership.user == User.get(User.email == email).id)).role


def test_an_owner_changes_a_role_in_place_and_the_log_says_so(app, owner_client, store):
    make_member(store, "dev@example.com", "viewer")
    member = app.test_client()
    sign_in(member, "dev@example.com")
    assert post(member, "/dashboard/settings/name", {"name": "Mine now"}).status_code == 403
    dev = User.get(User.email == "dev@example.com")
    answer = post(owner_client, f"/dashboard/team/{dev.id}/role", {"role": "admin"}, form_page="/dashboard/team")
    assert answer.status_code == 302 and _role(store, "dev@example.com") == "admin"
    entry = AuditEntry.select().order_by(AuditEntry.id.desc()).get()
    assert (entry.action, entry.target, entry.detail) == ("member.role", "dev@example.com", "viewer -> admin")
    # the same session, the new role's rights on its next request
    assert post(member, "/dashboard/settings/name", {"name": "Renamed by dev"}).status_code == 302
    refused = post(owner_client, f"/dashboard/team/{dev.id}/role", {"role": "superuser"}, form_page="/dashboard/team")
    assert refused.status_code == 400 and "role: one of" in refused.get_data(as_text=True)
    assert _role(store, "dev@example.com") == "admin"


def test_an_owner_can_neither_demote_nor_remove_themself(owner_client, store):
    make_member(store, "second@example.com", "owner")          # even with another owner left
    me = User.get(User.email == "owner@example.com")
    for path, data in ((f"/dashboard/team/{me.id}/role", {"role": "viewer"}), (f"/dashboard/team/{me.id}/remove", {})):
        refused = post(owner_client, path, data, form_page="/dashboard/team")
        assert refused.status_code == 400 and "your own role" in refused.get_data(as_text=True), path
    assert _role(store, "owner@example.com") == "owner" and owner_client.get("/dashboard/team").status_code == 200


def test_the_last_owner_stays_and_a_demoted_owners_late_request_changes_nothing(store):
    from core.errors import BadRequest, Forbidden
    from services.accounts import people

    first, second = make_member(store, "a@example.com", "owner"), make_member(store, "b@example.com", "owner")
    people.change_role(store, second.id, "admin", by=first)
    # `second` passed the page's role check as an owner, but is none by the time the change is made
    with pytest.raises(Forbidden):
        people.change_role(store, first.id, "admin", by=second)
    with pytest.raises(Forbidden):
        people.remove_member(store, first.id, by=second, now=utcnow())
    with pytest.raises(BadRequest):                              # the one owner left, by themself
        people.change_role(store, first.id, "admin", by=first)
    assert _role(store, "a@example.com") == "owner"


def test_only_owners_change_roles(client, store):
    make_member(store, "admin@example.com", "admin")
    target = make_member(store, "viewer@example.com", "viewer")
    sign_in(client, "admin@example.com")
    assert post(client, f"/dashboard/team/{target.id}/role", {"role": "owner"}).status_code == 403
    assert _role(store, "viewer@example.com") == "viewer"
