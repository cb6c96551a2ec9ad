"""The operator CLI (docs/api.md#authentication-and-scopes): its commands and their JSON output are a contract."""
import datetime as dt
import json
import re

import pytest

from models.base import db
from models.stores import ApiKey, Store
from services.accounts.api_keys import MERCHANT_SCOPES
from tests import factories

KEY = re.compile(r"^sk_live_[0-9a-f]{40}$")


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


def invoke(runner, *args):
    return runner.invoke(args=list(args))


def invoke_json(runner, *args):
    result = invoke(runner, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def bearer(raw):
    return {"Authorization": f"Bearer {raw}"}


def test_stores_create_json_shape_and_a_working_standard_key(runner, client):
    wallet = "0x" + "c0" * 20                   # paid out in USDC on Base: an address on Base
    out = invoke_json(runner, "stores", "create", "--name", "Corner shop", "--payout-wallet", wallet,
                      "--output-asset", "usdc.base")
    assert set(out) == {"store_id", "store_name", "api_key"}
    assert out["store_name"] == "Corner shop"
    assert KEY.match(out["api_key"])
    store = Store.get_by_id(out["store_id"])
    assert (store.name, store.payout_wallet, store.output_asset) == ("Corner shop", wallet, "usdc.base")
    key = ApiKey.get(ApiKey.store == store.id)
    assert key.kind == "standard" and key.scope_set == set(MERCHANT_SCOPES)
    created = client.post("/v1/invoices", headers=bearer(out["api_key"]), json={"amount": "5.00"})
    assert created.status_code == 201
    assert created.get_json()["output_asset"] == "usdc.base"


def test_stores_create_without_json_prints_the_key_once_in_text(runner):
    result = invoke(runner, "stores", "create", "--name", "Text shop")
    assert result.exit_code == 0
    store = Store.get(Store.name == "Text shop")
    assert str(store.id) in result.output
    assert re.search(r"sk_live_[0-9a-f]{40}", result.output)
    assert store.output_asset == "usdc.near" and store.payout_wallet is None


@pytest.mark.parametrize("name", ["", "   ", "n" * 201])
def test_stores_create_with_a_bad_name_fails_cleanly(runner, name):
    result = invoke(runner, "stores", "create", "--name", name, "--json")
    assert result.exit_code != 0
    assert "name" in result.output and "Traceback" not in result.output
    assert Store.select().count() == 0


def test_keys_create_json_shape_with_the_kinds_default_scopes(runner, store):
    out = invoke_json(runner, "keys", "create", "--store", str(store.id))
    assert set(out) == {"id", "api_key", "kind", "scopes"}
    assert KEY.match(out["api_key"])
    assert out["kind"] == "standard"
    assert set(out["scopes"]) == set(MERCHANT_SCOPES)
    assert not any(scope.startswith("woocommerce:") for scope in out["scopes"])
    assert ApiKey.get_by_id(out["id"]).store_id == store.id


def test_keys_create_bootstrap(runner, store):
    out = invoke_json(runner, "keys", "create", "--store", str(store.id), "--kind", "bootstrap")
    assert out["kind"] == "bootstrap"
    assert sorted(out["scopes"]) == ["woocommerce:connect", "woocommerce:status"]
    row = ApiKey.get_by_id(out["id"])
    assert row.expires_at is not None and row.expires_at - row.created_at == dt.timedelta(hours=24)


def test_keys_create_with_scopes_limits_the_key(runner, client, store):
    out = invoke_json(runner, "keys", "create", "--store", str(store.id), "--scopes", "invoices:read, transactions:read")
    assert out["scopes"] == ["invoices:read", "transactions:read"]
    assert client.get("/v1/invoices", headers=bearer(out["api_key"])).status_code == 200
    refused = client.post("/v1/invoices", headers=bearer(out["api_key"]), json={"amount": "1.00"})
    assert (refused.status_code, refused.get_json()["code"]) == (403, "INSUFFICIENT_SCOPE")


@pytest.mark.parametrize("scopes", ["payments:read", "invoices:read,payments:read", "invoices:*", "admin"])
def test_keys_create_refuses_unknown_scopes(runner, store, scopes):
    result = invoke(runner, "keys", "create", "--store", str(store.id), "--scopes", scopes, "--json")
    assert result.exit_code != 0
    assert "scope" in result.output and "Traceback" not in result.output
    assert ApiKey.select().count() == 0


@pytest.mark.parametrize("args", [("--kind", "root"), ("--store", "not-a-uuid"),
                                  ("--store", "00000000-0000-0000-0000-000000000000")])
def test_keys_create_refuses_a_bad_kind_or_store(runner, store, args):
    base = {"--store": str(store.id), "--kind": "standard"}
    base[args[0]] = args[1]
    result = invoke(runner, "keys", "create", *[part for pair in base.items() for part in pair], "--json")
    assert result.exit_code != 0
    assert ApiKey.select().count() == 0


def test_keys_revoke_then_the_key_is_401(runner, client, store):
    out = invoke_json(runner, "keys", "create", "--store", str(store.id))
    assert client.get("/v1/invoices", headers=bearer(out["api_key"])).status_code == 200
    result = invoke(runner, "keys", "revoke", out["id"])
    assert result.exit_code == 0
    assert ApiKey.get_by_id(out["id"]).revoked_at is not None
    response = client.get("/v1/invoices", headers=bearer(out["api_key"]))
    assert (response.status_code, response.get_json()["error"]["code"]) == (401, "invalid_api_key")
    assert invoke(runner, "keys", "revoke", out["id"]).exit_code == 0      # again: harmless


def test_keys_revoke_of_an_unknown_key_fails(runner, app):
    result = invoke(runner, "keys", "revoke", "key_" + "0" * 32)
    assert result.exit_code != 0 and "Traceback" not in result.output


def test_stores_set_payout_lets_the_store_create_invoices(runner, client):
    store = factories.make_store(payout_wallet=None)
    auth = bearer(factories.make_key(store))
    before = client.post("/v1/invoices", headers=auth, json={"amount": "1.00"})
    assert (before.status_code, before.get_json()["code"]) == (400, "payout_wallet_not_configured")
    result = invoke(runner, "stores", "set-payout", "--store", str(store.id), "--wallet", "shop.near")
    assert result.exit_code == 0
    assert Store.get_by_id(store.id).payout_wallet == "shop.near"
    assert client.post("/v1/invoices", headers=auth, json={"amount": "1.00"}).status_code == 201


@pytest.mark.parametrize("store_id, wallet", [("not-a-uuid", "w.near"), ("00000000-0000-0000-0000-000000000000", "w.near"),
                                              (None, ""), (None, "w" * 257)])
def test_stores_set_payout_refuses_a_bad_store_or_wallet(runner, store, store_id, wallet):
    result = invoke(runner, "stores", "set-payout", "--store", store_id or str(store.id), "--wallet", wallet)
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert Store.get_by_id(store.id).payout_wallet == "merchant.near"


MALFORMED_NEAR_WALLETS = ["a b.near", "javascript:alert(1)", "Shop.near", "shop..near", "-shop.near", "a",
                          "x" * 65, "shop.near\u200b"]


@pytest.mark.parametrize("wallet", MALFORMED_NEAR_WALLETS)
def test_a_malformed_payout_wallet_is_refused_and_never_stored(runner, store, wallet):
    """Paid out in usdc.near, so the wallet must be a NEAR account id: wherever it is set."""
    result = invoke(runner, "stores", "set-payout", "--store", str(store.id), "--wallet", wallet)
    assert result.exit_code != 0 and "NEAR account id" in result.output and "Traceback" not in result.output
    assert Store.get_by_id(store.id).payout_wallet == "merchant.near"
    created = invoke(runner, "stores", "create", "--name", "Wallet shop", "--payout-wallet", wallet, "--json")
    assert created.exit_code != 0 and "NEAR account id" in created.output
    assert not Store.select().where(Store.name == "Wallet shop").exists()


@pytest.mark.parametrize("output_asset, wallet", [("usdc.near", "my_shop-1.near"), ("usdc.near", "f" * 64),
                                                  ("usdc.eth", "0x" + "ab" * 20)])
def test_a_payout_wallet_of_the_payout_networks_shape_is_kept(runner, output_asset, wallet):
    out = invoke_json(runner, "stores", "create", "--name", "Wallet shop", "--payout-wallet", wallet,
                      "--output-asset", output_asset)
    assert Store.get_by_id(out["store_id"]).payout_wallet == wallet


def test_a_near_wallet_for_an_evm_payout_asset_is_refused(runner):
    result = invoke(runner, "stores", "create", "--name", "Wallet shop", "--payout-wallet", "shop.near",
                    "--output-asset", "usdc.eth", "--json")
    assert result.exit_code != 0 and "Ethereum" in result.output
    assert Store.select().count() == 0


@pytest.mark.parametrize("kind, scopes", [
    ("standard", "woocommerce:disconnect"), ("standard", "invoices:read,woocommerce:connect"),
    ("standard", "woocommerce:status"), ("bootstrap", "woocommerce:disconnect"), ("bootstrap", "invoices:read"),
])
def test_keys_create_refuses_platform_scopes_outside_their_kinds(runner, store, kind, scopes):
    result = invoke(runner, "keys", "create", "--store", str(store.id), "--kind", kind, "--scopes", scopes, "--json")
    assert result.exit_code != 0 and f"a {kind} key cannot hold" in result.output
    assert ApiKey.select().count() == 0


def test_keys_create_refuses_integration_keys(runner, store):
    # An integration key is issued by connect and bound to its installation; one made by hand could
    # disconnect (and so lock out) the store's plugin.
    result = invoke(runner, "keys", "create", "--store", str(store.id), "--kind", "integration",
                    "--scopes", "invoices:create,woocommerce:disconnect", "--json")
    assert result.exit_code != 0 and "integration" in result.output
    assert ApiKey.select().count() == 0


def test_demo_creates_a_store_once_and_prints_its_key_once(runner, client):
    first = invoke(runner, "demo")
    assert first.exit_code == 0
    key = re.search(r"sk_live_[0-9a-f]{40}", first.output).group(0)
    assert client.get("/v1/invoices", headers=bearer(key)).status_code == 200
    assert client.post("/v1/invoices", headers=bearer(key), json={"amount": "1.00"}).status_code == 201
    second = invoke(runner, "demo")
    assert second.exit_code == 0
    assert "sk_live_" not in second.output
    assert (Store.select().count(), ApiKey.select().count()) == (1, 1)


def test_db_upgrade_on_a_migrated_database_is_a_no_op(runner, store):
    def history():
        return db.execute_sql("SELECT name, applied FROM schema_migration ORDER BY name").fetchall()

    applied = history()
    assert any(name.startswith("0001") for name, _ in applied)
    for _ in range(2):
        result = invoke(runner, "db", "upgrade")
        assert result.exit_code == 0, result.output
        assert "up to date" in result.output
    assert history() == applied
    assert Store.get_by_id(store.id).name == store.name             # data untouched


def test_refunds_stuck_lists_late_and_held_refunds(app, store):
    from core.clock import utcnow

    now = utcnow()
    invoice = factories.make_invoice(store, status="paid")
    late = factories.make_refund(invoice, status="processing", expires_at=now - dt.timedelta(hours=2))
    held = factories.make_refund(invoice, status="expired", review_reason="delivered_after_close")
    factories.make_refund(invoice, status="processing")                     # still in time
    result = app.test_cli_runner().invoke(args=["refunds", "stuck", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert {row["id"] for row in rows} == {late.public_id, held.public_id}
    assert {row["invoice_id"] for row in rows} == {invoice.public_id}


def test_statement_rebuild_sums_days_again_from_the_rows(runner, store):
    """Rows written around the application (here: the roll-up lost) are summed again by the same
    rules; an unknown store is a one-line error."""
    from decimal import Decimal

    from models.settlement_days import SettlementDay
    from tests.support.statement_oracle import assert_roll_up_matches_rows

    paid_at = dt.datetime(2026, 3, 10, 9)
    factories.make_invoice(store, now=paid_at, status="paid", paid_at=paid_at, paid_amount=Decimal("12.50"))
    with db.connection_context():
        kept = assert_roll_up_matches_rows(store.id)
        SettlementDay.delete().execute()
    result = invoke(runner, "statement", "rebuild", "--from", "2026-03-01", "--to", "2026-03-31",
                    "--store", str(store.id))
    assert result.exit_code == 0 and result.output.strip() == "day rows written: 1", result.output
    with db.connection_context():
        assert assert_roll_up_matches_rows(store.id) == kept and kept[0]["gross_paid"] == "12.50"
    assert invoke(runner, "statement", "rebuild", "--from", "2026-03-01", "--to", "2026-03-31",
                  "--store", "nope").exit_code == 1


def test_rates_set_show_and_none(runner, client, auth):
    result = invoke(runner, "rates", "set", "eur", "1.0842")
    assert result.exit_code == 0 and "1 EUR = 1.0842 USD" in result.output
    shown = invoke(runner, "rates", "show").output
    assert "sandbox           EUR 1.0842" in shown and "EUR: 1.0842 USD (sandbox)" in shown
    invoice = client.post("/v1/invoices", json={"amount": "10.00", "currency": "EUR"}, headers=auth).json
    body = {"origin_asset": "usdc.eth", "refund_to": "0x" + "b" * 40, "dry": True}
    quote = client.post(f"/v1/public/invoices/{invoice['id']}/quote", json=body).json
    assert quote["estimate"]["exchange_rate"]["rate"] == "1.0842"          # at once, for the next quote
    assert invoice_rate_refused(runner, "EUR", "none") == 0
    assert "EUR: unavailable" in invoke(runner, "rates", "show").output
    assert client.post(f"/v1/public/invoices/{invoice['id']}/quote", json=body).status_code == 503


def invoice_rate_refused(runner, *args):
    return invoke(runner, "rates", "set", *args).exit_code


@pytest.mark.parametrize("args", [("USD", "1"), ("XAU", "1"), ("EURO", "1"), ("EUR", "0"), ("EUR", "-1"),
                                  ("EUR", "1e3"), ("EUR", "abc")])
def test_rates_set_refuses_what_is_not_a_rate(runner, args):
    result = invoke(runner, "rates", "set", *args)
    assert result.exit_code != 0 and "Error" in result.output


def test_stores_set_fee_and_back_to_the_default(runner, store, app):
    refused = invoke(runner, "stores", "set-fee", "--store", str(store.id), "--bps", "50")
    assert refused.exit_code != 0 and "OPERATOR_FEE_ACCOUNT" in refused.output      # no account to pay it to
    assert invoke(runner, "stores", "set-fee", "--store", str(store.id), "--bps", "0").exit_code == 0
    with db.connection_context():
        assert Store.get_by_id(store.id).fee_bps == 0
    assert invoke(runner, "stores", "set-fee", "--store", str(store.id), "--default").exit_code == 0
    with db.connection_context():
        assert Store.get_by_id(store.id).fee_bps is None
    for args in (["--bps", "501"], ["--bps", "-1"], [], ["--bps", "5", "--default"]):
        assert invoke(runner, "stores", "set-fee", "--store", str(store.id), *args).exit_code != 0


def test_stores_set_output_asset_goes_through_the_dashboards_rule(runner, store):
    wallet = "0x" + "c0" * 20
    refused = invoke(runner, "stores", "set-output-asset", "--store", str(store.id), "--asset", "usdc.base")
    assert refused.exit_code != 0 and "Base" in refused.output and "Traceback" not in refused.output
    not_money = invoke(runner, "stores", "set-output-asset", "--store", str(store.id), "--asset", "eth")
    assert not_money.exit_code != 0 and "not a stablecoin" in not_money.output
    assert Store.get_by_id(store.id).output_asset == "usdc.near"
    done = invoke(runner, "stores", "set-output-asset", "--store", str(store.id), "--asset", "usdc.base",
                  "--wallet", wallet)
    assert done.exit_code == 0, done.output
    stored = Store.get_by_id(store.id)
    assert (stored.output_asset, stored.payout_wallet) == ("usdc.base", wallet)


def test_stores_create_refuses_an_output_asset_that_is_not_a_stablecoin(runner):
    result = invoke(runner, "stores", "create", "--name", "Coin shop", "--output-asset", "btc", "--json")
    assert result.exit_code != 0 and "not a stablecoin" in result.output
    assert not Store.select().where(Store.name == "Coin shop").exists()
