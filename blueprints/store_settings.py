"""The store's own settings: its notification mail (docs/email.md#what-is-sent-when)."""
from flask import Blueprint, g

from blueprints.auth import requires_scope
from blueprints.requests import load_body
from core.clock import utcnow
from schemas.notifications import NotificationSettingsSchema, NotificationSettingsUpdateSchema
from services.mail import store_notifications

bp = Blueprint("store_settings", __name__, url_prefix="/v1")


@bp.get("/store/notifications")
@requires_scope("settings:read")
def get_notifications():
    return NotificationSettingsSchema().dump(store_notifications.settings_of(g.store.id))


@bp.patch("/store/notifications")
@requires_scope("settings:write")
def update_notifications():
    data = load_body(NotificationSettingsUpdateSchema())
    chosen = store_notifications.update(g.store.id, now=utcnow(), **data)
    return NotificationSettingsSchema().dump(chosen)
