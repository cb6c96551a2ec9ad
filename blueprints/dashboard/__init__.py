"""The merchant dashboard (docs/dashboard.md): server-rendered pages at /dashboard/ for the people
of a store, signed in with a server-side session (Flask-Session over the app's Redis) and a CSRF
token on every change (Flask-WTF's CSRFProtect, scoped to this blueprint). Every action calls the
same service function its API route calls; these modules only read forms and render answers."""
from __future__ import annotations

import datetime as dt
import secrets

from flask import Blueprint, Flask, current_app, render_template
from flask_session import Session
from flask_wtf.csrf import CSRFError, CSRFProtect

from blueprints.context import settings
from blueprints.pages import PAGE_CSP, ROOT
from core.errors import DomainError, Forbidden, NotFound
from infra import queues
from services.accounts import people

bp = Blueprint("dashboard", __name__, url_prefix="/dashboard", template_folder=str(ROOT / "templates"))
csrf = CSRFProtect()
IDLE_TIMEOUT = dt.timedelta(minutes=30)
_SECRET_KEY = "tender:dashboard:secret_key"


def init_app(app: Flask) -> None:
    """Sessions live in Redis under their own prefix; the cookie goes only to /dashboard, so the
    API and the buyer pages never read or write one."""
    base_url = app.extensions["tender.settings"].public_base_url
    app.config.update(
        SESSION_TYPE="redis", SESSION_REDIS=queues.redis(), SESSION_KEY_PREFIX="tender:dashboard:session:",
        SESSION_PERMANENT=False, SESSION_USE_SIGNER=False, SESSION_ID_LENGTH=32,
        PERMANENT_SESSION_LIFETIME=IDLE_TIMEOUT,          # each request renews the Redis TTL: the idle timeout
        SESSION_REFRESH_EACH_REQUEST=True, SESSION_COOKIE_NAME="tender_dashboard",
        SESSION_COOKIE_PATH="/dashboard", SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=base_url.startswith("https://"),
        WTF_CSRF_CHECK_DEFAULT=False,                     # only this blueprint's requests are checked
        WTF_CSRF_TIME_LIMIT=None,                         # the token lives as long as its session
        WTF_CSRF_SSL_STRICT=True)
    Session(app)
    csrf.init_app(app)


def ensure_secret_key() -> None:
    """The key that signs CSRF tokens: one for every web process, made once and kept in Redis
    beside the sessions it serves (SECRET_KEY in the environment wins)."""
    if current_app.secret_key:
        return
    key = settings().secret_key
    if not key:
        redis = queues.redis()
        redis.set(_SECRET_KEY, secrets.token_hex(32), nx=True)
        key = redis.get(_SECRET_KEY).decode()
    current_app.secret_key = key


@bp.after_request
def _headers(response):
    response.headers["Content-Security-Policy"] = PAGE_CSP
    response.headers["Permissions-Policy"] = "camera=(), microphone=(), geolocation=(), payment=()"
    return response


class RoleRefused(Exception):
    """The signed-in role lacks the right a page or action needs: a 403 page."""


@bp.errorhandler(NotFound)
@bp.errorhandler(people.NoSuchMember)
def _not_found(error):
    return render_template("dashboard/problem.html", title="Not found",
                           message="There is nothing here, or it belongs to another store."), 404


@bp.errorhandler(Forbidden)
@bp.errorhandler(RoleRefused)
def _forbidden(error):
    return render_template("dashboard/problem.html", title="Not allowed", message=str(error)), 403


@bp.errorhandler(CSRFError)
def _csrf_refused(error):
    return render_template("dashboard/problem.html", title="Please try again",
                           message="This form expired or did not come from this page. Reload the page "
                                   "and send it again."), 400


@bp.errorhandler(DomainError)
def _refused(error):
    """The API's refusal (400, 409, 422, 503…), its message in a page, with its status."""
    return render_template("dashboard/problem.html", title="That did not work", message=error.message), error.status


# The menu: each page and the right it needs; a page not built yet is left out.
MENU = (("dashboard.home", "Home", "read"), ("dashboard.invoices_page", "Invoices", "read"),
        ("dashboard.payment_links_page", "Payment links", "read"), ("dashboard.refunds_page", "Refunds", "read"),
        ("dashboard.webhooks_page", "Webhooks", "read"), ("dashboard.api_keys_page", "API keys", "develop"),
        ("dashboard.books_page", "Books", "read"), ("dashboard.integrations_page", "Integrations", "read"),
        ("dashboard.settings_page", "Settings", "read"),
        ("dashboard.team_page", "Team", "team"), ("dashboard.audit_page", "Audit log", "audit"))


@bp.context_processor
def _menu():
    from flask import g

    from services.accounts import roles

    def menu():
        return [(endpoint, label) for endpoint, label, right in MENU
                if endpoint in current_app.view_functions and roles.may(g.get("role"), right)]
    return {"menu": menu, "may": lambda right: roles.may(g.get("role"), right)}


def sandbox() -> bool:
    return settings().swap_provider == "sandbox"


from blueprints.dashboard import (api_key_pages, books_pages, home, invoice_pages, payment_link_pages,  # noqa: E402,F401
                                  sandbox_pages, session_state, settings_pages, sign_in, team_pages,
                                  webhook_pages)
