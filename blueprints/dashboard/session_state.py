"""Who is signed in, to which store, with which role: read from the server-side session on every
dashboard request (docs/dashboard.md#sessions).

A session holds the user's id, the epoch of the user's sessions it began in (a password change
moves it, ending every other session), when it began (12 hours at most), the chosen store, and when
the password was last confirmed (the four sensitive actions want it within 5 minutes)."""
from __future__ import annotations

import datetime as dt
from functools import wraps
from urllib.parse import urlsplit

from flask import current_app, g, redirect, request, session, url_for

from blueprints.dashboard import RoleRefused, bp, csrf, ensure_secret_key
from blueprints.requests import refuse_unstorable_fields
from core.client_addresses import client_of
from core.clock import utcnow
from models.people import User
from services.accounts import audit, people, roles

ABSOLUTE_TIMEOUT = dt.timedelta(hours=12)
REAUTH_WINDOW = dt.timedelta(minutes=5)
# Pages open to anyone: signing in, and the links that let people in.
PUBLIC_ENDPOINTS = {"dashboard.login", "dashboard.invitation", "dashboard.password_reset",
                    "dashboard.password_reset_link"}
# Pages a signed-in user reaches before choosing a store (or setting up a TOTP the store requires).
STORELESS_ENDPOINTS = {"dashboard.stores", "dashboard.logout", "dashboard.totp", "dashboard.confirm",
                       "dashboard.account"}


def client_address() -> str:
    return client_of(request.remote_addr)


def _stamp(moment: dt.datetime) -> float:
    return moment.timestamp()


def _moment(value) -> dt.datetime | None:
    return dt.datetime.fromtimestamp(value, dt.timezone.utc).replace(tzinfo=None) if value else None


@bp.before_request
def _load_session():
    ensure_secret_key()
    refuse_unstorable_fields(request.form)
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        csrf.protect()
    g.user, g.store, g.role = _signed_in_user(), None, None
    if request.endpoint in PUBLIC_ENDPOINTS:
        return None
    if g.user is None:
        return redirect(url_for("dashboard.login"))
    g.store, g.role = _chosen_store(g.user)
    if request.endpoint in STORELESS_ENDPOINTS:
        return None
    if g.store is None:
        return redirect(url_for("dashboard.stores"))
    if g.store.require_totp and not g.user.totp_secret:
        return redirect(url_for("dashboard.totp"))
    return None


def _signed_in_user() -> User | None:
    user_id, started = session.get("user_id"), _moment(session.get("started_at"))
    if not user_id:
        return None
    user = User.get_or_none(User.id == user_id)
    if user is None or user.session_epoch != session.get("epoch") or started is None \
            or utcnow() - started > ABSOLUTE_TIMEOUT:
        session.clear()           # deleted from Redis at the end of this request
        return None
    return user


def _chosen_store(user: User):
    store_id = session.get("store_id")
    chosen = people.membership_in(user, store_id) if store_id else None
    if chosen is None:
        mine = people.stores_of(user)
        if len(mine) != 1:
            return None, None
        store, role = mine[0]
        session["store_id"] = str(store.id)
        return store, role
    return chosen


def sign_in(user: User) -> None:
    """A new session id at every sign-in: an id planted before it (session fixation) is worth nothing."""
    current_app.session_interface.regenerate(session)
    session.clear()
    now = utcnow()
    session.update(user_id=str(user.id), epoch=user.session_epoch, started_at=_stamp(now),
                   confirmed_at=_stamp(now))
    g.user = user


def sign_out() -> None:
    session.clear()


def confirm_now() -> None:
    session["confirmed_at"] = _stamp(utcnow())


def recently_confirmed() -> bool:
    confirmed = _moment(session.get("confirmed_at"))
    return confirmed is not None and utcnow() - confirmed <= REAUTH_WINDOW


def safe_next(target: str | None) -> str:
    """Only a path of this dashboard: never another site (an open redirect)."""
    parts = urlsplit(target or "")
    if parts.scheme or parts.netloc or not parts.path.startswith("/dashboard/") or "\\" in target:
        return url_for("dashboard.home")
    return target


def requires(right: str, *, confirmed: bool = False):
    """The signed-in role must hold `right` (else a 403 page); `confirmed`: the password was given
    again within 5 minutes (else the confirm page, which comes back here)."""
    def decorator(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            if not roles.may(g.role, right):
                raise RoleRefused(f"Your role ({g.role}) cannot do this. Ask an owner of the store if you need it.")
            if confirmed and not recently_confirmed():
                back = request.path if request.method == "GET" else request.referrer
                return redirect(url_for("dashboard.confirm", next=safe_next(urlsplit(back or "").path or None)))
            return view(*args, **kwargs)
        return wrapper
    return decorator


def note(action: str, *, target: str | None = None, detail: str | None = None) -> None:
    """The audit log's entry for a change made on this request."""
    audit.record(g.store, g.user, action, now=utcnow(), target=target, detail=detail, address=client_address())
