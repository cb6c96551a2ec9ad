"""API keys in the dashboard (docs/dashboard.md#api-keys): the store's keys with their scopes and
when each was last used, a new standard key shown once (after the password again), revoke; the
CLI's service calls."""
from __future__ import annotations

import datetime as dt

from flask import flash, g, redirect, render_template, request, url_for

from blueprints.dashboard import bp
from blueprints.dashboard.session_state import note, requires
from core.clock import utcnow
from services.accounts import api_keys


def ago(then: dt.datetime, *, now: dt.datetime) -> str:
    """How long ago, in the unit a person reads at a glance. A key's last use is kept to the
    minute, so nothing finer than "within the last minute" is claimed."""
    minutes = int((now - then).total_seconds() // 60)
    if minutes < 1:
        return "within the last minute"
    if minutes < 60:
        count, unit = minutes, "minute"
    elif minutes < 48 * 60:
        count, unit = minutes // 60, "hour"
    else:
        count, unit = minutes // (24 * 60), "day"
    return f"{count} {unit}{'' if count == 1 else 's'} ago"


def _page(**shown):
    now = utcnow()
    return render_template("dashboard/api_keys.html", keys=api_keys.list_for_store(g.store),
                           scopes=api_keys.MERCHANT_SCOPES, ago=lambda then: ago(then, now=now), **shown)


@bp.get("/api-keys")
@requires("develop")
def api_keys_page():
    return _page()


@bp.post("/api-keys")
@requires("develop", confirmed=True)
def create_api_key():
    chosen = [scope for scope in api_keys.MERCHANT_SCOPES if scope in request.form.getlist("scopes")]
    key, raw = api_keys.issue_key(g.store, kind="standard", scopes=chosen or None, now=utcnow())
    note("api_key.create", target=key.id, detail=key.scopes)
    # Shown on this answer only: never stored, never in a URL, never in the session.
    return _page(new_key=raw, new_key_id=key.id)


@bp.post("/api-keys/<key_id>/revoke")
@requires("develop")
def revoke_api_key(key_id):
    api_keys.revoke(key_id, now=utcnow(), store=g.store)
    note("api_key.revoke", target=key_id)
    flash(f"Key {key_id} revoked: it stops working within a second.")
    return redirect(url_for("dashboard.api_keys_page"))
