"""Signing people into the merchant dashboard from a Flask test client, as a browser would: the
form's CSRF token is read from the page before each POST."""
from __future__ import annotations

import re

from core.clock import utcnow
from models.base import db
from services.accounts import people

PASSWORD = "correct horse battery"
_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def make_member(store, email: str, role: str = "owner", password: str = PASSWORD):
    """A user who accepted an invitation to `store` with `role`."""
    with db.connection_context():
        token = people.invite(store, email, role, now=utcnow())
        user, _invitation = people.accept_invitation(token, password=password, now=utcnow())
    return user


def csrf_token(client, path: str = "/dashboard/login") -> str:
    page = client.get(path)
    found = _TOKEN.search(page.get_data(as_text=True))
    assert found, f"no CSRF token on {path} ({page.status_code})"
    return found.group(1)


def post(client, path: str, data: dict | None = None, *, form_page: str = "/dashboard/"):
    """POST a form of `form_page` with that page's CSRF token."""
    return client.post(path, data={**(data or {}), "csrf_token": csrf_token(client, form_page)})


def sign_in(client, email: str, password: str = PASSWORD, **extra):
    return client.post("/dashboard/login", data={"email": email, "password": password,
                                                 "csrf_token": csrf_token(client), **extra})


def session_cookie(client):
    return client.get_cookie("tender_dashboard", path="/dashboard")
