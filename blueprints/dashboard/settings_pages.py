"""The store's settings in the dashboard: its name, payout wallet and output asset (owners, after
the password again; the CLI's functions), notification mail (the same functions as
/v1/store/notifications) and the TOTP rule."""
from __future__ import annotations

from flask import flash, g, redirect, render_template, request, url_for

from blueprints.context import provider
from blueprints.dashboard import bp
from blueprints.dashboard.session_state import note, requires
from core.clock import utcnow
from core.errors import BadRequest, DomainError
from models.mail import MERCHANT_KINDS
from services.accounts import roles, stores
from services.engine import quotes
from services.mail import store_notifications


def _page(error=None, status=200):
    return render_template("dashboard/settings.html", notifications=store_notifications.settings_of(g.store.id),
                           kinds=MERCHANT_KINDS, error=error, asset_choices=_asset_choices()), status


def _asset_choices() -> list[str] | None:
    """What an owner may pick as the output asset; None while the swap provider cannot say."""
    if not roles.may(g.role, "payout"):
        return None
    try:
        return stores.payout_asset_choices(_offered())
    except DomainError:
        return None


def _offered() -> list[str]:
    return [asset.code for asset in quotes.supported_assets(provider())]


@bp.get("/settings")
@requires("read")
def settings_page():
    return _page()


@bp.post("/settings/name")
@requires("operate")
def rename_store():
    try:
        g.store = stores.rename(g.store, request.form.get("name", ""), now=utcnow())
    except BadRequest as error:
        return _page(error.message, 400)
    note("store.rename", detail=g.store.name)
    flash("Saved.")
    return redirect(url_for("dashboard.settings_page"))


@bp.post("/settings/payout-wallet")
@requires("payout", confirmed=True)
def set_payout_wallet():
    try:
        g.store = stores.set_payout_wallet(g.store, request.form.get("wallet", ""), now=utcnow())
    except BadRequest as error:
        return _page(error.message, 400)
    note("store.payout_wallet", detail=g.store.payout_wallet)
    flash("Payout wallet saved.")
    return redirect(url_for("dashboard.settings_page"))


@bp.post("/settings/output-asset")
@requires("payout", confirmed=True)
def set_output_asset():
    before = (g.store.output_asset, g.store.payout_wallet)
    try:
        g.store = stores.set_output_asset(g.store, request.form.get("output_asset", ""), offered=_offered(),
                                          wallet=request.form.get("wallet", ""), now=utcnow())
    except BadRequest as error:
        return _page(error.message, 400)
    note("store.output_asset", detail=f"{before[0]} -> {g.store.output_asset}")
    if g.store.payout_wallet != before[1]:
        note("store.payout_wallet", detail=g.store.payout_wallet)
    flash(f"New invoices are paid out in {g.store.output_asset}.")
    return redirect(url_for("dashboard.settings_page"))


@bp.post("/settings/notifications")
@requires("operate")
def set_notifications():
    recipients = [line.strip() for line in request.form.get("recipients", "").splitlines() if line.strip()]
    try:
        store_notifications.update(g.store.id, now=utcnow(), recipients=recipients,
                                   kinds={kind: kind in request.form.getlist("kinds") for kind in MERCHANT_KINDS})
    except BadRequest as error:
        return _page(error.message, 400)
    note("store.notifications", detail=", ".join(recipients))
    flash("Notification mail saved.")
    return redirect(url_for("dashboard.settings_page"))


@bp.post("/settings/totp")
@requires("payout")
def set_totp_rule():
    g.store = stores.require_totp(g.store, request.form.get("require") == "1", now=utcnow())
    note("store.require_totp", detail=str(g.store.require_totp).lower())
    flash("Everyone now needs an authenticator app." if g.store.require_totp else "An authenticator app is optional.")
    return redirect(url_for("dashboard.settings_page"))
