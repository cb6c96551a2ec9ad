"""API keys in the dashboard (docs/dashboard.md#api-keys): the store's keys with their scopes,
a new standard key shown once (after the password again), revoke; the CLI's service calls."""
from __future__ import annotations

from flask import flash, g, redirect, render_template, request, url_for

from blueprints.dashboard import bp
from blueprints.dashboard.session_state import note, requires
from core.clock import utcnow
from services.accounts import api_keys


@bp.get("/api-keys")
@requires("develop")
def api_keys_page():
    return render_template("dashboard/api_keys.html", keys=api_keys.list_for_store(g.store),
                           scopes=api_keys.MERCHANT_SCOPES)


@bp.post("/api-keys")
@requires("develop", confirmed=True)
def create_api_key():
    chosen = [scope for scope in api_keys.MERCHANT_SCOPES if scope in request.form.getlist("scopes")]
    key, raw = api_keys.issue_key(g.store, kind="standard", scopes=chosen or None, now=utcnow())
    note("api_key.create", target=key.id, detail=key.scopes)
    # Shown on this answer only: never stored, never in a URL, never in the session.
    return render_template("dashboard/api_keys.html", keys=api_keys.list_for_store(g.store),
                           scopes=api_keys.MERCHANT_SCOPES, new_key=raw, new_key_id=key.id)


@bp.post("/api-keys/<key_id>/revoke")
@requires("develop")
def revoke_api_key(key_id):
    api_keys.revoke(key_id, now=utcnow(), store=g.store)
    note("api_key.revoke", target=key_id)
    flash(f"Key {key_id} revoked: it stops working within a second.")
    return redirect(url_for("dashboard.api_keys_page"))
