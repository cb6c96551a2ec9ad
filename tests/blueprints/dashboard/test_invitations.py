"""How people get in: the operator's invitation (`flask users invite`), an owner's invitation link,
password resets. Every link works once, and not after it expires."""
from __future__ import annotations

import datetime as dt
import json

import pytest

from core.clock import utcnow
from models.base import db
from models.people import AuditEntry, Invitation, Membership, User
from services.accounts import people
from tests.support.dashboard import PASSWORD, csrf_token, sign_in


def _accept(client, path, password=PASSWORD):
    return client.post(path, data={"password": password, "password_again": password,
                                   "csrf_token": csrf_token(client, path)})


def test_the_operator_invites_the_first_owner_who_gets_in_through_the_link(app, client, store):
    result = app.test_cli_runner().invoke(args=["users", "invite", "--store", str(store.id), "--email",
                                                "Owner@Example.com", "--role", "owner", "--json"])
    assert result.exit_code == 0, result.output
    url = json.loads(result.output)["invitation_url"]
    assert url.startswith("http://tender.test/dashboard/invitations/")
    path = url.removeprefix("http://tender.test")
    page = client.get(path)
    assert page.status_code == 200 and "owner@example.com" in page.get_data(as_text=True)
    answer = _accept(client, path)
    assert answer.status_code == 302 and client.get("/dashboard/").status_code == 200
    user = User.get(User.email == "owner@example.com")
    assert Membership.get(Membership.user == user.id).role == "owner"
    assert [entry.action for entry in AuditEntry.select().order_by(AuditEntry.id)] == ["member.invite", "member.join"]
    assert not Invitation.select().where(Invitation.token_digest.contains(path.rsplit("/", 1)[1])).exists()


def test_an_invitation_link_works_once(app, client, store):
    with db.connection_context():
        token = people.invite(store, "new@example.com", "admin", now=utcnow())
    path = f"/dashboard/invitations/{token}"
    assert _accept(client, path).status_code == 302
    second = app.test_client()
    assert second.get(path).status_code == 404
    assert second.post(path, data={"password": "another password!", "password_again": "another password!",
                                   "csrf_token": csrf_token(second)}).status_code == 404
    assert not people.verify_password(User.get(User.email == "new@example.com"), "another password!")


def test_an_invitation_expires_after_72_hours(client, store):
    with db.connection_context():
        token = people.invite(store, "late@example.com", "viewer", now=utcnow() - dt.timedelta(hours=72, seconds=1))
    path = f"/dashboard/invitations/{token}"
    assert client.get(path).status_code == 404
    assert client.post(path, data={"password": PASSWORD, "password_again": PASSWORD,
                                   "csrf_token": csrf_token(client)}).status_code == 404
    assert not User.select().where(User.email == "late@example.com").exists()


def test_an_existing_user_proves_their_password_to_join_another_store(client, store, other_store):
    from tests.support.dashboard import make_member

    make_member(store, "both@example.com", "owner")
    with db.connection_context():
        token = people.invite(other_store, "both@example.com", "developer", now=utcnow())
    path = f"/dashboard/invitations/{token}"
    assert _accept(client, path, "not my password at all").status_code == 400
    assert _accept(client, path).status_code == 302
    assert Membership.select().where(Membership.store == other_store.id).count() == 1


def test_a_password_reset_link_works_once_for_an_hour_and_ends_other_sessions(app, client, store):
    from tests.support.dashboard import make_member

    make_member(store, "me@example.com", "owner")
    elsewhere = app.test_client()
    sign_in(elsewhere, "me@example.com")
    with db.connection_context():
        _user, token = people.start_reset("me@example.com", now=utcnow())
        _user, stale = people.start_reset("me@example.com", now=utcnow() - dt.timedelta(hours=1, seconds=1))
    assert client.get(f"/dashboard/password-reset/{stale}").status_code == 404
    path = f"/dashboard/password-reset/{token}"
    new = "a much better password"
    answer = client.post(path, data={"password": new, "password_again": new, "csrf_token": csrf_token(client, path)})
    assert answer.status_code == 302 and client.get("/dashboard/").status_code == 200
    assert elsewhere.get("/dashboard/").status_code == 302          # the other session ended
    assert client.get(path).status_code == 404                      # used
    assert sign_in(app.test_client(), "me@example.com", new).status_code == 302


def test_asking_for_a_reset_says_the_same_for_known_and_unknown_addresses(client, store):
    from tests.support.dashboard import make_member

    make_member(store, "me@example.com", "owner")
    answers = [client.post("/dashboard/password-reset", data={"email": email, "csrf_token": csrf_token(client)})
               .get_data(as_text=True) for email in ("me@example.com", "nobody@example.com")]
    assert answers[0] == answers[1] and "If that address has an account" in answers[0]


def test_passwords_are_argon2id_hashes():
    from argon2 import PasswordHasher, Type

    hasher = PasswordHasher()
    assert hasher.type is Type.ID
    assert people._DUMMY_HASH.startswith("$argon2id$")


def test_the_operator_prints_a_reset_link_for_a_user(app, store):
    from tests.support.dashboard import make_member

    make_member(store, "me@example.com", "owner")
    runner = app.test_cli_runner()
    result = runner.invoke(args=["users", "reset-link", "--email", "ME@example.com", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["password_reset_url"].startswith("http://tender.test/dashboard/password-reset/")
    assert runner.invoke(args=["users", "reset-link", "--email", "nobody@example.com"]).exit_code == 1


def test_the_invitation_and_the_reset_link_are_mailed(app, client, store):
    from models.mail import Mail
    from tests.support.dashboard import make_member

    result = app.test_cli_runner().invoke(args=["users", "invite", "--store", str(store.id), "--email",
                                                "owner@example.com", "--json"])
    url = json.loads(result.output)["invitation_url"]
    invitation = Mail.get(Mail.kind == "invitation")
    assert invitation.recipient == "owner@example.com" and url in invitation.text_body
    make_member(store, "me@example.com", "owner")
    client.post("/dashboard/password-reset", data={"email": "me@example.com", "csrf_token": csrf_token(client)})
    client.post("/dashboard/password-reset", data={"email": "nobody@example.com", "csrf_token": csrf_token(client)})
    reset = Mail.get(Mail.kind == "password_reset")
    assert reset.recipient == "me@example.com" and "/dashboard/password-reset/" in reset.text_body
    assert Mail.select().count() == 2


def test_a_links_token_never_reaches_the_log(client, store, caplog):
    with db.connection_context():
        token = people.invite(store, "new@example.com", "viewer", now=utcnow())
    with caplog.at_level("INFO", logger="tender.request"):
        page = client.get(f"/dashboard/invitations/{token}")
        client.get(f"/dashboard/password-reset/{token}")
        # Paths no route takes, or a method it does not: still a link's token.
        assert client.get(f"/dashboard/invitations/{token}/").status_code == 404
        assert client.put(f"/dashboard/invitations/{token}").status_code == 405
        assert client.get(f"/dashboard/password-reset/{token}/x").status_code == 404
    logged = [record.getMessage() + json.dumps(getattr(record, "fields", {})) for record in caplog.records]
    assert len(logged) == 5 and "/dashboard/invitations/<token>" in logged[0]
    assert not [line for line in logged if token in line]
    # Nor does a page the link opens send it on in a Referer header.
    assert page.headers["Referrer-Policy"] == "no-referrer"


def test_two_acceptances_racing_spend_an_invitation_once(store, monkeypatch):
    with db.connection_context():
        token = people.invite(store, "race@example.com", "viewer", now=utcnow())
        read_before = people.open_invitation(token, now=utcnow())
        people.accept_invitation(token, password=PASSWORD, now=utcnow())
        # The second request read the invitation before the first one spent it.
        monkeypatch.setattr(people, "open_invitation", lambda *_args, **_kwargs: read_before)
        with pytest.raises(people.LinkRefused):
            people.accept_invitation(token, password=PASSWORD, now=utcnow())


def test_two_resets_racing_spend_the_link_once(store, monkeypatch):
    from tests.support.dashboard import make_member

    make_member(store, "me@example.com", "owner")
    with db.connection_context():
        _user, token = people.start_reset("me@example.com", now=utcnow())
        read_before = people.open_reset(token, now=utcnow())
        people.finish_reset(token, "the first new password", now=utcnow())
        monkeypatch.setattr(people, "open_reset", lambda *_args, **_kwargs: read_before)
        with pytest.raises(people.LinkRefused):
            people.finish_reset(token, "the second new password", now=utcnow())
    assert people.verify_password(User.get(User.email == "me@example.com"), "the first new password")
