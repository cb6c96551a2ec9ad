"""Migration 0012 gives keys issued before refunds existed what they need (docs/refunds.md#who-may-refund)."""
import importlib.util
from pathlib import Path

from models.base import db
from models.stores import ApiKey
from services.accounts import api_keys
from tests import factories

MIGRATION = Path(__file__).resolve().parents[2] / "migrations" / "0012_refunds.py"


def _migration():
    spec = importlib.util.spec_from_file_location("refunds_migration", MIGRATION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_keys_gain_the_refund_scopes_their_invoice_scopes_imply(store):
    before = {"writer": ("standard", "invoices:write invoices:read events:read"),
              "reader": ("standard", "invoices:read"),
              "links": ("standard", "payment_links:read"),
              "plugin": ("integration", "invoices:create invoices:read transactions:read woocommerce:status"),
              "bootstrap": ("bootstrap", "woocommerce:connect woocommerce:status")}
    ids = {}
    for name, (kind, scopes) in before.items():
        raw = factories.make_key(store, kind=kind)
        with db.connection_context():
            ids[name] = ApiKey.get(ApiKey.digest == api_keys.digest(raw)).id
            ApiKey.update(scopes=scopes).where(ApiKey.id == ids[name]).execute()
    with db.connection_context():
        _migration().grant_refund_scopes(db.obj)
        after = {name: ApiKey.get_by_id(key_id).scope_set for name, key_id in ids.items()}
    refunds = {"refunds:write", "refunds:read"}
    assert after["writer"] & refunds == refunds and after["plugin"] & refunds == refunds
    assert after["reader"] & refunds == {"refunds:read"}
    assert not after["links"] & refunds and not after["bootstrap"] & refunds
