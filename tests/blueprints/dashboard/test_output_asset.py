"""The store's output asset on the settings page: owners only, after the password again, through the
same function and rule as `flask stores set-output-asset`."""
from __future__ import annotations

import datetime as dt

import pytest

from core.clock import utcnow
from models.people import AuditEntry
from models.stores import Store
from tests.blueprints.dashboard.conftest import SCRIPT
from tests.support.dashboard import make_member, post, sign_in

BASE_WALLET = "0x" + "c0" * 20


def _set(client, data):
    return post(client, "/dashboard/settings/output-asset", data, form_page="/dashboard/settings")


def test_an_owner_moves_the_payouts_to_another_network_with_its_wallet(owner_client, client, store, auth):
    page = owner_client.get("/dashboard/settings").get_data(as_text=True)
    assert 'name="output_asset"' in page and "<option>usdc.base</option>" in page
    assert "<option>btc</option>" not in page                   # offered by the sandbox, but not a stablecoin
    assert _set(owner_client, {"output_asset": "usdc.base", "wallet": BASE_WALLET}).status_code == 302
    stored = Store.get_by_id(store.id)
    assert (stored.output_asset, stored.payout_wallet) == ("usdc.base", BASE_WALLET)
    actions = [(entry.action, entry.detail) for entry in AuditEntry.select().order_by(AuditEntry.id)]
    assert actions[-2:] == [("store.output_asset", "usdc.near -> usdc.base"), ("store.payout_wallet", BASE_WALLET)]
    created = client.post("/v1/invoices", json={"amount": "5.00"}, headers=auth)
    assert created.status_code == 201 and created.get_json()["output_asset"] == "usdc.base"


@pytest.mark.parametrize("data, says", [
    ({"output_asset": "btc"}, "not a stablecoin"),
    ({"output_asset": "usdc.eth"}, "wallet: must be an address on Ethereum"),      # merchant.near cannot receive it
    ({"output_asset": "usdt.eth", "wallet": "0x" + "ab" * 20}, "not offered by the swap provider"),
    ({"output_asset": SCRIPT}, "not a stablecoin"),
])
def test_an_asset_the_rule_refuses_is_said_on_the_page_and_nothing_changes(owner_client, store, data, says):
    answer = _set(owner_client, data)
    text = answer.get_data(as_text=True)
    assert answer.status_code == 400 and says in text and SCRIPT not in text
    stored = Store.get_by_id(store.id)
    assert (stored.output_asset, stored.payout_wallet) == ("usdc.near", "merchant.near")


def test_only_an_owner_who_gave_the_password_lately_changes_it(app, owner_client, store, monkeypatch):
    from blueprints.dashboard import session_state

    make_member(store, "admin@example.com", "admin")
    admin = app.test_client()
    sign_in(admin, "admin@example.com")
    assert "output_asset" not in admin.get("/dashboard/settings").get_data(as_text=True)
    assert post(admin, "/dashboard/settings/output-asset", {"output_asset": "usdc.base"}).status_code == 403
    later = utcnow() + dt.timedelta(minutes=6)
    monkeypatch.setattr(session_state, "utcnow", lambda: later)
    answer = _set(owner_client, {"output_asset": "usdc.base", "wallet": BASE_WALLET})
    assert answer.status_code == 302 and "/dashboard/confirm" in answer.headers["Location"]
    assert Store.get_by_id(store.id).output_asset == "usdc.near"


def test_the_payout_wallet_shown_beside_it_is_escaped(owner_client, store):
    Store.update(payout_wallet=SCRIPT).where(Store.id == store.id).execute()
    text = owner_client.get("/dashboard/settings").get_data(as_text=True)
    assert SCRIPT not in text and "&lt;script&gt;" in text
