"""Signing in and out, the invitation and password-reset links, choosing a store, confirming the
password before a sensitive action, and setting up TOTP (docs/dashboard.md#signing-in)."""
from __future__ import annotations

from flask import g, redirect, render_template, request, session, url_for

from blueprints.context import settings
from blueprints.dashboard import bp
from blueprints.dashboard.session_state import (client_address, confirm_now, safe_next, sign_in, sign_out)
from core.clock import utcnow
from core.errors import BadRequest
from models.base import db
from services.accounts import audit, login_throttle, people, stores

GENERIC_REFUSAL = "That e-mail and password (or code) do not match an account, or there were too many tries. " \
                  "Wait 15 minutes, or reset your password."
LINK_REFUSAL = "This link is unknown, was used already, or has expired. Ask for a new one."


@bp.route("/login", methods=["GET", "POST"])
def login():
    if request.method == "GET":
        return render_template("dashboard/login.html")
    email, address = request.form.get("email", ""), client_address()
    if login_throttle.is_locked(email, address):
        return render_template("dashboard/login.html", error=GENERIC_REFUSAL, email=email), 429
    user = people.find_by_email(email)
    password_ok = people.verify_password(user, request.form.get("password", ""))
    if not password_ok or not people.verify_totp(user, request.form.get("code", "")):
        login_throttle.note_failure(email, address)
        needs_code = bool(password_ok and user.totp_secret)
        return render_template("dashboard/login.html", error=GENERIC_REFUSAL, email=email, ask_code=needs_code), 401
    login_throttle.forget_account(email)
    sign_in(user)
    return redirect(url_for("dashboard.home"))


@bp.post("/logout")
def logout():
    sign_out()
    return redirect(url_for("dashboard.login"))


@bp.route("/invitations/<token>", methods=["GET", "POST"])
def invitation(token):
    now = utcnow()
    try:
        invite = people.open_invitation(token, now=now)
    except people.LinkRefused:
        return render_template("dashboard/problem.html", title="Invitation", message=LINK_REFUSAL), 404
    existing = people.find_by_email(invite.email)
    has_account = bool(existing and existing.password_hash)
    context = dict(invitation=invite, store=stores.get_store(invite.store_id), has_account=has_account)
    if request.method == "GET":
        return render_template("dashboard/invitation.html", **context)
    if not has_account and request.form.get("password") != request.form.get("password_again"):
        return render_template("dashboard/invitation.html", error="The two passwords differ.", **context), 400
    try:
        with db.atomic():
            user, invite = people.accept_invitation(token, password=request.form.get("password", ""), now=now)
            audit.record(context["store"], user, "member.join", now=now, target=user.email, detail=invite.role,
                         address=client_address())
    except people.LinkRefused:
        return render_template("dashboard/problem.html", title="Invitation", message=LINK_REFUSAL), 404
    except BadRequest as error:
        return render_template("dashboard/invitation.html", error=error.message, **context), 400
    sign_in(user)
    session["store_id"] = str(invite.store_id)
    return redirect(url_for("dashboard.home"))


@bp.route("/password-reset", methods=["GET", "POST"])
def password_reset():
    if request.method == "GET":
        return render_template("dashboard/password_reset.html")
    # The same answer whether or not the address has an account: the page tells no one who uses Tender.
    people.start_reset(request.form.get("email", ""), now=utcnow(), base_url=settings().public_base_url)
    return render_template("dashboard/password_reset.html", sent=True)


@bp.route("/password-reset/<token>", methods=["GET", "POST"])
def password_reset_link(token):
    now = utcnow()
    try:
        people.open_reset(token, now=now)
    except people.LinkRefused:
        return render_template("dashboard/problem.html", title="Password reset", message=LINK_REFUSAL), 404
    if request.method == "GET":
        return render_template("dashboard/new_password.html")
    if request.form.get("password") != request.form.get("password_again"):
        return render_template("dashboard/new_password.html", error="The two passwords differ."), 400
    try:
        user = people.finish_reset(token, request.form.get("password", ""), now=now)
    except people.LinkRefused:
        return render_template("dashboard/problem.html", title="Password reset", message=LINK_REFUSAL), 404
    except BadRequest as error:
        return render_template("dashboard/new_password.html", error=error.message), 400
    login_throttle.forget_account(user.email)
    sign_in(user)
    return redirect(url_for("dashboard.home"))


# Their tokens are secrets: the request log writes these paths as their routes (blueprints/request_log.py).
invitation.secret_in_path = password_reset_link.secret_in_path = True


@bp.route("/stores", methods=["GET", "POST"], endpoint="stores")
def stores_page():
    mine = people.stores_of(g.user)
    if request.method == "POST":
        chosen = request.form.get("store_id", "")
        if any(str(store.id) == chosen for store, _role in mine):
            session["store_id"] = chosen
            return redirect(url_for("dashboard.home"))
    return render_template("dashboard/stores.html", stores=mine)



@bp.route("/confirm", methods=["GET", "POST"])
def confirm():
    """The password again (and the TOTP code when enabled) before a sensitive action."""
    target = safe_next(request.values.get("next"))
    if request.method == "GET":
        return render_template("dashboard/confirm.html", next=target)
    email, address = g.user.email, client_address()
    if login_throttle.is_locked(email, address) or not people.verify_password(g.user, request.form.get("password", "")) \
            or not people.verify_totp(g.user, request.form.get("code", "")):
        login_throttle.note_failure(email, address)
        return render_template("dashboard/confirm.html", next=target, error=GENERIC_REFUSAL), 401
    confirm_now()
    return redirect(target)


@bp.route("/account", methods=["GET", "POST"])
def account():
    """A new password, with the current one: every other session of the user ends, this one goes on."""
    if request.method == "GET":
        return render_template("dashboard/account.html")
    email, address = g.user.email, client_address()
    if login_throttle.is_locked(email, address) or not people.verify_password(g.user, request.form.get("current", "")):
        login_throttle.note_failure(email, address)
        return render_template("dashboard/account.html", error=GENERIC_REFUSAL), 401
    if request.form.get("password") != request.form.get("password_again"):
        return render_template("dashboard/account.html", error="The two new passwords differ."), 400
    try:
        user = people.set_password(g.user, request.form.get("password", ""), now=utcnow())
    except BadRequest as error:
        return render_template("dashboard/account.html", error=error.message), 400
    store_id = session.get("store_id")
    sign_in(user)                      # a new session id, in the new epoch
    if store_id:
        session["store_id"] = store_id
    if g.store is not None:
        audit.record(g.store, user, "user.password_change", now=utcnow(), address=address)
    return redirect(url_for("dashboard.home"))


@bp.route("/account/totp", methods=["GET", "POST"])
def totp():
    secret = session.setdefault("totp_pending", people.new_totp_secret())
    context = dict(secret=secret, uri=people.totp_uri(g.user, secret), enabled=bool(g.user.totp_secret))
    if request.method == "GET":
        return render_template("dashboard/totp.html", **context)
    try:
        people.enable_totp(g.user, secret, request.form.get("code", ""), now=utcnow())
    except BadRequest as error:
        return render_template("dashboard/totp.html", error=error.message, **context), 400
    session.pop("totp_pending", None)
    if g.store is not None:
        audit.record(g.store, g.user, "user.totp_enabled", now=utcnow(), address=client_address())
    return redirect(url_for("dashboard.home"))
