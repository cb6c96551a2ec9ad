"""Storefront integration request and response shapes. The platform's name appears in one field
(`<platform>_version`), so the connect schema is built per platform from core/platforms.py."""
from functools import lru_cache

from marshmallow import RAISE, Schema, fields, post_dump, validate

from core import clock, urls
from models.integrations import ACTIVE, CONNECTION_STATES
from schemas.fields import StrictString

PAYOUT_WARNING = ("The store has no payout wallet yet: invoices cannot be created until an operator "
                  "sets one.")

_VERSION = dict(load_default=None, validate=validate.Length(min=1, max=64))


@lru_cache(maxsize=None)
def connect_schema(platform: str) -> type[Schema]:
    # URLs are checked by services/integrations.py (site_url rules, webhook address rules).
    schema = Schema.from_dict({
        "webhook_url": StrictString(required=True),
        "site_url": StrictString(required=True),
        "plugin_version": StrictString(**_VERSION),
        "cms_version": StrictString(**_VERSION),
        f"{platform}_version": StrictString(**_VERSION),
    }, name=f"{platform.capitalize()}ConnectSchema")
    schema.Meta.unknown = RAISE
    return schema


_BOOLEAN = {"type": "boolean"}
_DATE_TIME = {"type": "string", "format": "date-time"}


class IntegrationConnectionSchema(Schema):
    """The connect response (spec: Integration connection). Dumps services.integrations.Connection."""

    SOMETIMES_SENT = ("warning",)

    store_id = fields.Function(lambda c: str(c.store.id))
    store_name = fields.Function(lambda c: c.store.name)
    integration_id = fields.Function(lambda c: str(c.integration.id))
    integration_public_id = fields.Function(lambda c: c.integration.public_id)
    installation_id = fields.Function(lambda c: c.integration.installation_id)
    site_url = fields.Function(lambda c: c.integration.site_url)
    api_key = fields.String()
    webhook_secret = fields.String()
    webhook_url = fields.Function(lambda c: c.integration.webhook_url)
    webhook_id = fields.Function(lambda c: str(c.integration.webhook_endpoint_id))
    webhook_endpoint_id = fields.Function(lambda c: c.endpoint_public_id)
    status = fields.Constant(ACTIVE, metadata={"type": "string", "enum": [ACTIVE]})
    credentials_rotated = fields.Boolean()
    payout_configured = fields.Function(lambda c: bool(c.store.payout_wallet), metadata=_BOOLEAN)
    checkout_base_url = fields.Function(lambda c: urls.checkout_base_url())
    warning = fields.String(dump_only=True, metadata={
        "description": "Sent only while the store has no payout wallet: invoices cannot be created yet.",
        "example": PAYOUT_WARNING})

    @post_dump
    def _warn_without_payout(self, data, **kwargs):
        # The one optional field: present only while no payout wallet is set.
        if not data["payout_configured"]:
            data["warning"] = PAYOUT_WARNING
        return data


class IntegrationStatusSchema(Schema):
    """The status response: connection state, payout readiness and the installation's ids."""

    status = fields.String(metadata={"enum": list(CONNECTION_STATES)})
    connected = fields.Function(lambda s: s["status"] == ACTIVE, metadata=_BOOLEAN)
    store_id = fields.Function(lambda s: str(s["store"].id))
    store_name = fields.Function(lambda s: s["store"].name)
    payout_configured = fields.Function(lambda s: bool(s["store"].payout_wallet), metadata=_BOOLEAN)
    # Null until the store has ever connected.
    integration_id = fields.Function(lambda s: _of(s, lambda i: str(i.id)), allow_none=True)
    integration_public_id = fields.Function(lambda s: _of(s, lambda i: i.public_id), allow_none=True)
    installation_id = fields.Function(lambda s: _of(s, lambda i: i.installation_id), allow_none=True)
    site_url = fields.Function(lambda s: _of(s, lambda i: i.site_url), allow_none=True)
    webhook_url = fields.Function(lambda s: _of(s, lambda i: i.webhook_url), allow_none=True)
    plugin_version = fields.Function(lambda s: _of(s, lambda i: i.plugin_version), allow_none=True)
    connected_at = fields.Function(lambda s: _of(s, lambda i: clock.isoformat(i.connected_at)),
                                   allow_none=True, metadata=_DATE_TIME)
    disconnected_at = fields.Function(lambda s: _of(s, lambda i: clock.isoformat(i.disconnected_at)),
                                      allow_none=True, metadata=_DATE_TIME)
    checkout_base_url = fields.Function(lambda s: urls.checkout_base_url())
    # What invoices may be priced in: a plugin offers Tender only when the shop's currency is listed.
    supported_currencies = fields.List(fields.String(), metadata={"example": ["USD", "EUR"]})

def _of(state: dict, read):
    return None if state["integration"] is None else read(state["integration"])
