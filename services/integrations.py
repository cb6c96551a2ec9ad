"""Storefront integrations (spec: Integration; docs/api.md#authentication-and-scopes): connect, disconnect, status.

An installation is one site of one platform connected to a store. Connect issues its dedicated
key and webhook secret; the installation's `webhook_url` is an ordinary webhook endpoint that
the delivery engine signs with that secret (the endpoint row is the one place the secret lives).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
import secrets
from urllib.parse import urlsplit, urlunsplit

from core import ids
from core.errors import Conflict, NotFound, Unauthorized, validation_error
from infra.locks import lock_row, write_transaction
from models.integrations import ACTIVE, DISCONNECTED, NOT_CONNECTED, Integration
from models.stores import ApiKey, Store
from models.webhooks import WebhookEndpoint
from services.accounts import api_keys
from services.webhooks.endpoints import ROTATION_OVERLAP
from services.webhooks.webhook_urls import MAX_URL_LENGTH, check_target_url


@dataclass
class Connection:
    """What connect returns: the installation and the credentials shown only in this response."""
    integration: Integration
    store: Store
    api_key: str
    webhook_secret: str
    credentials_rotated: bool

    @property
    def endpoint_public_id(self) -> str | None:
        endpoint = endpoint_of(self.integration)
        return endpoint.public_id if endpoint else None


def new_webhook_secret() -> str:
    """64 hex characters (docs/api.md#identifiers-and-secrets); the HMAC key is this text's UTF-8 bytes."""
    return secrets.token_hex(32)


def normalize_site_url(url: str) -> str:
    """The storefront's homepage as we compare it: http(s), lower-case scheme and host, no
    query, fragment or trailing slash, so `https://Shop.example/` and `https://shop.example` match."""
    parts = urlsplit(url) if isinstance(url, str) and len(url) <= MAX_URL_LENGTH else None
    if (parts is None or parts.scheme.lower() not in ("http", "https") or not parts.hostname
            or any(ord(c) <= 32 for c in url) or parts.username or parts.password):
        raise validation_error("site_url", "must be an http:// or https:// URL of the storefront's homepage")
    try:
        port = parts.port
    except ValueError:
        raise validation_error("site_url", "has an invalid port") from None
    host = parts.hostname.lower() + (f":{port}" if port else "")
    return urlunsplit((parts.scheme.lower(), host, parts.path.rstrip("/"), "", ""))


def _active(store_id, platform: str) -> Integration | None:
    return Integration.get_or_none((Integration.store == store_id) & (Integration.platform == platform)
                                   & (Integration.status == "active"))


def connect(store: Store, key: ApiKey, platform: str, data: dict, *, now: dt.datetime,
            allow_private: bool) -> Connection:
    """Create the store's installation for `platform`, or reconnect it with fresh credentials."""
    site_url = normalize_site_url(data["site_url"])
    webhook_url = check_target_url(data["webhook_url"], allow_private=allow_private, param="webhook_url")
    versions = dict(plugin_version=data.get("plugin_version"), cms_version=data.get("cms_version"),
                    platform_version=data.get(f"{platform}_version"))
    secret = new_webhook_secret()
    with write_transaction():
        store = lock_row(Store, store.id)          # one connect of a store at a time
        active = _active(store.id, platform)
        retried = key.kind == "bootstrap" and not _consume(key, site_url, now=now)
        if retried:
            _retire_unseen_credentials(key, active, site_url, webhook_url, now=now)
        if active is not None and active.site_url != site_url:
            raise Conflict("INTEGRATION_SITE_CONFLICT",
                           f"This store is connected to another site ({active.site_url}); disconnect it first.",
                              details={"site_url": active.site_url,
                           "integration_public_id": active.public_id})
        key_row, raw_key = api_keys.issue_key(store, kind="integration", now=now, issued_by=key,
                                              scopes=api_keys.default_scopes("integration", platform))
        existing = active or Integration.get_or_none(
            (Integration.store == store.id) & (Integration.platform == platform) & (Integration.site_url == site_url))
        if existing is None:
            integration = _create(store, platform, site_url, webhook_url, secret, key_row, versions, now=now)
        else:
            integration = _reconnect(existing, webhook_url, secret, key_row, versions, now=now,
                                     keep_previous_secret=not retried)
    return Connection(integration, store, raw_key, secret, credentials_rotated=existing is not None)


def _spent_key() -> Unauthorized:
    return Unauthorized("invalid_api_key", "The API key is unknown, revoked or expired.")


def _consume(key: ApiKey, site_url: str, *, now: dt.datetime) -> bool:
    """A bootstrap key serves one successful connect: consumed in the connect's own transaction,
    so a failed connect leaves it usable. True when this connect consumed it; False for a retry of
    the connect that did (its response lost): the same site within the retry window
    (docs/retries.md). Any other use of a spent key is refused."""
    if ApiKey.update(consumed_at=now, consumed_for=site_url).where(
            (ApiKey.id == key.id) & ApiKey.consumed_at.is_null()).execute():
        return True
    spent = ApiKey.get_by_id(key.id)
    if spent.consumed_for != site_url or not api_keys.in_connect_retry_window(spent, now=now):
        raise _spent_key()
    return False


def _retire_unseen_credentials(bootstrap: ApiKey, active: Integration | None, site_url: str, webhook_url: str, *,
                               now: dt.datetime) -> None:
    """A retry repeats its connect only while nobody has acted on that connect's answer: the
    installation is still active with the same site and webhook, and its key is the one this
    bootstrap key's connect issued and has never been used. Its unseen key is revoked here, in
    the same compare-and-set that the key's first use races against. Anything else: 401."""
    current = (ApiKey.get_or_none(ApiKey.id == active.api_key_id)
               if active is not None and active.api_key_id is not None else None)
    if (current is None or active.site_url != site_url or active.webhook_url != webhook_url
            or current.issued_by != bootstrap.id or not api_keys.revoke_unused(current.id, now=now)):
        raise _spent_key()


def _create(store, platform, site_url, webhook_url, secret, key_row, versions, *, now) -> Integration:
    endpoint = _new_endpoint(store, platform, site_url, webhook_url, secret, now=now)
    return Integration.create(
        id=ids.new_uuid(), public_id=ids.new_public_id("int_"), installation_id=ids.new_public_id("inst_"),
        store=store.id, platform=platform, site_url=site_url, webhook_url=webhook_url,
        webhook_endpoint=endpoint.id, api_key=key_row.id, status="active", connected_at=now,
        created_at=now, updated_at=now, **versions)


def _new_endpoint(store, platform, site_url, webhook_url, secret, *, now) -> WebhookEndpoint:
    # Subscribed to every kind ("*"), new kinds included. Not counted against the store's
    # 16-endpoint limit: connect must not fail because the merchant has many endpoints.
    return WebhookEndpoint.create(
        id=ids.new_uuid(), public_id=ids.new_public_id("wh_"), store=store.id,
        name=f"{platform}: {site_url}"[:100], url=webhook_url, events=["*"], secret=secret, enabled=True,
        created_at=now, updated_at=now)


def _reconnect(integration, webhook_url, secret, key_row, versions, *, now, keep_previous_secret=True) -> Integration:
    if integration.api_key_id is not None:
        api_keys.revoke(integration.api_key_id, now=now)      # the old dedicated key: 401 from now on
    endpoint = (WebhookEndpoint.get_or_none(WebhookEndpoint.id == integration.webhook_endpoint_id)
                if integration.webhook_endpoint_id else None)
    if endpoint is None:                                       # deleted by the merchant meanwhile
        endpoint = _new_endpoint(integration.store, integration.platform, integration.site_url, webhook_url,
                                 secret, now=now)
    else:
        # The replaced secret still signs (a second v1=) for 24 hours, as after a rotation, so a
        # delivery sent before the plugin has stored its new secret still verifies. Not after a
        # retried connect: the secret it replaces was never seen, so it goes at once.
        overlap = (dict(previous_secret=endpoint.secret, previous_secret_expires_at=now + ROTATION_OVERLAP)
                   if keep_previous_secret else {})
        (WebhookEndpoint.update(url=webhook_url, secret=secret, enabled=True, disabled_reason=None,
                                failing_since=None, updated_at=now, **overlap)
         .where(WebhookEndpoint.id == endpoint.id).execute())
    (Integration.update(webhook_url=webhook_url, webhook_endpoint=endpoint.id, api_key=key_row.id,
                        status="active", connected_at=now, disconnected_at=None, updated_at=now, **versions)
     .where(Integration.id == integration.id).execute())
    return Integration.get_by_id(integration.id)


def disconnect(store: Store, platform: str, *, now: dt.datetime) -> Integration:
    """Revoke the dedicated key and remove the installation's endpoint: nothing more is sent,
    pending deliveries included."""
    with write_transaction():
        lock_row(Store, store.id)
        integration = _active(store.id, platform)
        if integration is None:
            raise NotFound("integration_not_found", f"This store has no connected {platform} installation.")
        if integration.api_key_id is not None:
            api_keys.revoke(integration.api_key_id, now=now)
        (Integration.update(status="disconnected", disconnected_at=now, webhook_endpoint=None, updated_at=now)
         .where(Integration.id == integration.id).execute())
        if integration.webhook_endpoint_id is not None:
            # Removed, its pending deliveries with it: it frees nothing else and a reconnect makes a new one.
            WebhookEndpoint.delete().where(WebhookEndpoint.id == integration.webhook_endpoint_id).execute()
    return Integration.get_by_id(integration.id)


def status(store: Store, platform: str) -> dict:
    """The installation the store has now: the active one, else the last disconnected one."""
    store = Store.get_by_id(store.id)
    integration = (Integration.select()
                   .where((Integration.store == store.id) & (Integration.platform == platform))
                   .order_by((Integration.status == "active").desc(), Integration.updated_at.desc())
                   .first())
    return {"store": store, "integration": integration,
            "status": NOT_CONNECTED if integration is None
            else ACTIVE if integration.status == "active" else DISCONNECTED}


def for_key(key: ApiKey) -> Integration | None:
    """The installation a dedicated key was issued to (create invoice links the invoice to it).
    None for an integration-kind key an operator issued by hand (`keys create --kind integration`)."""
    return Integration.get_or_none(Integration.api_key == key.id)


def endpoint_of(integration: Integration) -> WebhookEndpoint | None:
    if integration.webhook_endpoint_id is None:
        return None
    return WebhookEndpoint.get_or_none(WebhookEndpoint.id == integration.webhook_endpoint_id)
