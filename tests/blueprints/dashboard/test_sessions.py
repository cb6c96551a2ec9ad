"""The dashboard's sessions and sign-in guards (docs/dashboard.md#sessions): each test fails when its
guard is taken away."""
from __future__ import annotations

import datetime as dt
import time

import pytest

from core.clock import utcnow
from infra import queues
from tests.support.dashboard import PASSWORD, csrf_token, make_member, post, session_cookie, sign_in


@pytest.fixture
def owner(store):
    return make_member(store, "owner@example.com", "owner")


def test_without_a_session_every_page_goes_to_the_login_page(client):
    for path in ("/dashboard/", "/dashboard/invoices", "/dashboard/refunds", "/dashboard/stores"):
        answer = client.get(path)
        assert answer.status_code == 302 and answer.headers["Location"].endswith("/dashboard/login")


def test_a_member_signs_in_and_sees_the_home_page(client, owner, store):
    answer = sign_in(client, owner.email)
    assert answer.status_code == 302 and answer.headers["Location"].endswith("/dashboard/")
    home = client.get("/dashboard/")
    assert home.status_code == 200 and "Test shop" in home.get_data(as_text=True)


def test_the_cookie_is_httponly_lax_and_only_for_the_dashboard(client, owner):
    answer = sign_in(client, owner.email)
    cookie = answer.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/dashboard" in cookie
    assert "Secure" not in cookie          # the test base URL is http (Secure is set behind https)
    assert client.get("/v1/public/assets").headers.get("Set-Cookie") is None


def test_the_session_lives_in_redis_with_the_idle_timeout(client, owner):
    sign_in(client, owner.email)
    key = "tender:dashboard:session:" + session_cookie(client).value
    assert 0 < queues.redis().ttl(key) <= 30 * 60


def test_a_post_without_the_csrf_token_is_refused(client, owner):
    sign_in(client, owner.email)
    answer = client.post("/dashboard/logout")
    assert answer.status_code == 400 and "did not come from this page" in answer.get_data(as_text=True)
    assert client.get("/dashboard/").status_code == 200          # still signed in


def test_a_login_post_without_the_csrf_token_is_refused(client, owner):
    answer = client.post("/dashboard/login", data={"email": owner.email, "password": PASSWORD})
    assert answer.status_code == 400 and client.get("/dashboard/").status_code == 302


def test_a_session_id_planted_before_sign_in_is_worth_nothing_after_it(app, client, owner):
    csrf_token(client)                      # the page gives this browser a session (its CSRF token)
    planted = session_cookie(client).value
    sign_in(client, owner.email)
    assert session_cookie(client).value != planted
    attacker = app.test_client()
    attacker.set_cookie("tender_dashboard", planted, path="/dashboard")
    assert attacker.get("/dashboard/").status_code == 302


def test_a_cookie_copied_before_sign_out_is_dead_after_it(app, client, owner):
    sign_in(client, owner.email)
    stolen = session_cookie(client).value
    assert post(client, "/dashboard/logout").status_code == 302
    assert not queues.redis().exists("tender:dashboard:session:" + stolen)      # gone on the server
    thief = app.test_client()
    thief.set_cookie("tender_dashboard", stolen, path="/dashboard")
    assert thief.get("/dashboard/").status_code == 302


def test_eleven_wrong_passwords_lock_the_account_with_one_generic_error(client, owner):
    for _ in range(10):
        wrong = sign_in(client, owner.email, "not the password")
        assert wrong.status_code == 401
    answer = sign_in(client, owner.email)             # the right password, the 11th try
    assert answer.status_code == 429 and client.get("/dashboard/").status_code == 302
    assert "do not match an account, or there were too many tries" in answer.get_data(as_text=True)
    unknown = sign_in(client, "nobody@example.com", "whatever")
    assert "do not match an account, or there were too many tries" in unknown.get_data(as_text=True)


def test_the_account_is_locked_from_every_client_address(app, client, owner):
    for n in range(10):
        guesser = app.test_client()
        guesser.post("/dashboard/login", data={"email": owner.email, "password": "x", "csrf_token": csrf_token(guesser)},
                     environ_base={"REMOTE_ADDR": f"10.0.0.{n}"})
    other = app.test_client()
    answer = other.post("/dashboard/login", data={"email": owner.email, "password": PASSWORD,
                                                  "csrf_token": csrf_token(other)},
                        environ_base={"REMOTE_ADDR": "10.0.1.1"})
    assert answer.status_code == 429


def test_ten_failures_from_one_client_lock_that_client_out_of_every_account(app, client, store, owner):
    for n in range(10):
        make_member(store, f"member{n}@example.com", "viewer")
        assert sign_in(client, f"member{n}@example.com", "not the password").status_code == 401
    answer = sign_in(client, owner.email)            # an account this client never failed on
    assert answer.status_code == 429 and client.get("/dashboard/").status_code == 302
    assert "do not match an account, or there were too many tries" in answer.get_data(as_text=True)
    elsewhere = app.test_client()
    assert elsewhere.post("/dashboard/login", data={"email": owner.email, "password": PASSWORD,
                                                    "csrf_token": csrf_token(elsewhere)},
                          environ_base={"REMOTE_ADDR": "10.0.2.1"}).status_code == 302


def test_a_session_ends_after_twelve_hours_however_busy(client, owner, monkeypatch):
    from blueprints.dashboard import session_state

    sign_in(client, owner.email)
    later = utcnow() + dt.timedelta(hours=12, minutes=1)
    monkeypatch.setattr(session_state, "utcnow", lambda: later)
    assert client.get("/dashboard/").status_code == 302


def test_a_password_change_ends_the_other_sessions(app, client, owner):
    from models.base import db
    from services.accounts import people

    sign_in(client, owner.email)
    with db.connection_context():
        people.set_password(owner, "a brand new password", now=utcnow())
    assert client.get("/dashboard/").status_code == 302


def test_every_page_has_a_strict_content_security_policy(client, owner):
    sign_in(client, owner.email)
    policy = client.get("/dashboard/").headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy and "unsafe-inline" not in policy


def test_with_totp_on_the_password_alone_does_not_sign_in(client, owner):
    import pyotp

    from models.base import db
    from services.accounts import people

    secret = people.new_totp_secret()
    with db.connection_context():
        people.enable_totp(owner, secret, pyotp.TOTP(secret).now(), now=utcnow())
    assert sign_in(client, owner.email).status_code == 401
    assert client.get("/dashboard/").status_code == 302
    # Wrong in every 30 s step the server accepts (the one before and after too) even if a step ends meanwhile.
    totp = pyotp.TOTP(secret)
    nearby = {totp.at(time.time(), counter_offset=offset) for offset in range(-2, 3)}
    wrong = next(code for code in ("000000", "111111", "222222", "333333", "444444", "555555") if code not in nearby)
    assert sign_in(client, owner.email, code=wrong).status_code == 401
    assert sign_in(client, owner.email, code=pyotp.TOTP(secret).now()).status_code == 302
    assert client.get("/dashboard/").status_code == 200


def test_changing_the_password_ends_the_other_sessions_and_keeps_this_one(app, client, owner):
    elsewhere = app.test_client()
    sign_in(elsewhere, owner.email)
    sign_in(client, owner.email)
    before = session_cookie(client).value
    wrong = post(client, "/dashboard/account", {"current": "not it", "password": "x" * 12, "password_again": "x" * 12},
                 form_page="/dashboard/account")
    assert wrong.status_code == 401
    answer = post(client, "/dashboard/account", {"current": PASSWORD, "password": "a fresh password",
                                                 "password_again": "a fresh password"}, form_page="/dashboard/account")
    assert answer.status_code == 302 and client.get("/dashboard/").status_code == 200
    assert session_cookie(client).value != before
    assert elsewhere.get("/dashboard/").status_code == 302


def test_the_cookie_is_secure_when_the_base_url_is_https(app, settings):
    import dataclasses

    from flask import Flask

    from blueprints import dashboard

    bare = Flask("https-only")
    bare.extensions["tender.settings"] = dataclasses.replace(settings, public_base_url="https://pay.example.com")
    dashboard.init_app(bare)
    assert bare.config["SESSION_COOKIE_SECURE"] is True and app.config["SESSION_COOKIE_SECURE"] is False
