"""Storefront integration fixtures: a bootstrap key, a connect helper, and the delivery pipe."""
from __future__ import annotations

import pytest

from tests import factories
from tests.services.webhooks.conftest import job_settings  # noqa: F401  (a fixture, shared)

PLATFORM = "woocommerce"
SITE = "https://shop.example.com"
HOOK = "https://shop.example.com/?wc-api=tender"


def route(action: str, platform: str = PLATFORM) -> str:
    return f"/v1/integration/{platform}/{action}"


def bearer(raw_key: str) -> dict:
    return {"Authorization": f"Bearer {raw_key}"}


@pytest.fixture
def bootstrap_auth(store):
    return bearer(factories.make_key(store, kind="bootstrap"))


def connect(client, auth, *, site_url=SITE, webhook_url=HOOK, expect=200, **extra):
    response = client.post(route("connect"), json={"site_url": site_url, "webhook_url": webhook_url, **extra},
                           headers=auth)
    assert response.status_code == expect, response.get_data(as_text=True)
    return response.get_json()
