"""The team (owners): members and their roles, inviting and changing a role (after the password
again) and removing; and the audit log of the store's changes."""
from __future__ import annotations

from flask import flash, g, redirect, render_template, request, url_for

from blueprints.context import settings
from blueprints.dashboard import bp
from blueprints.dashboard.session_state import note, requires
from core.clock import utcnow
from core.errors import BadRequest
from models.people import ROLES
from services.accounts import audit, people

AUDIT_PAGE = 50


def _team(error=None, status=200, **context):
    return render_template("dashboard/team.html", members=people.team_of(g.store), roles=ROLES, error=error,
                           **context), status


@bp.get("/team")
@requires("team")
def team_page():
    return _team()


@bp.post("/team")
@requires("team", confirmed=True)
def invite_member():
    email, role = request.form.get("email", ""), request.form.get("role", "")
    base_url = settings().public_base_url
    try:
        token = people.invite(g.store, email, role, now=utcnow(), invited_by=g.user, base_url=base_url)
    except BadRequest as error:
        return _team(error.message, 400, invite_error=True)
    note("member.invite", target=people.normal_email(email), detail=role)
    # The link, on this answer only: for an owner whose Tender sends no mail yet.
    return _team(invitation_url=people.invitation_url(base_url, token), invited=people.normal_email(email))


@bp.post("/team/<user_id>/remove")
@requires("team")
def remove_member(user_id):
    try:
        removed = people.remove_member(g.store, user_id, by=g.user, now=utcnow())
    except BadRequest as error:
        return _team(error.message, 400)
    note("member.remove", target=removed.email)
    flash(f"{removed.email} no longer has access to {g.store.name}.")
    return redirect(url_for("dashboard.team_page"))


@bp.post("/team/<user_id>/role")
@requires("team", confirmed=True)
def change_member_role(user_id):
    try:
        member, before = people.change_role(g.store, user_id, request.form.get("role", ""), by=g.user)
    except BadRequest as error:
        return _team(error.message, 400)
    note("member.role", target=member.user.email, detail=f"{before} -> {member.role}")
    flash(f"{member.user.email} is now {member.role}.")
    return redirect(url_for("dashboard.team_page"))


@bp.get("/audit")
@requires("audit")
def audit_page():
    before = request.args.get("before", "")
    entries, has_more = audit.newest(g.store, before_id=int(before) if before.isdigit() else None, limit=AUDIT_PAGE)
    return render_template("dashboard/audit.html", entries=entries, has_more=has_more)
