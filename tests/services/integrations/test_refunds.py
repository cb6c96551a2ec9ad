"""A storefront's integration key refunds its installation's invoices only, and its installation's
endpoint receives those refunds' events (docs/refunds.md#who-may-refund)."""
import datetime as dt

from core.clock import utcnow
from models.base import db
from models.webhooks import WebhookDelivery, WebhookEndpoint
from services.webhooks import outbox
from tests.payflow import poll_until_quiet, run_pipeline
from tests.services.integrations.conftest import bearer, connect


def _paid(client, auth, merchant, **body):
    invoice = client.post("/v1/invoices", headers=auth, json={"amount": "20.00", **body}).get_json()
    client.post(f"/v1/test_helpers/invoices/{invoice['id']}/pay", json={}, headers=merchant)   # invoices:write
    run_pipeline()
    return invoice


def test_an_integration_key_refunds_and_reads_only_its_own_invoices(client, auth, bootstrap_auth):
    shop = connect(client, bootstrap_auth)
    plugin = bearer(shop["api_key"])
    mine = _paid(client, plugin, auth, external_order_id="wc-7")
    theirs = _paid(client, auth, auth)
    refused = client.post(f"/v1/invoices/{theirs['id']}/refunds", json={"amount": "5.00"}, headers=plugin)
    assert refused.status_code == 403 and refused.json["error"]["code"] == "integration_key_forbidden"
    created = client.post(f"/v1/invoices/{mine['id']}/refunds", json={"amount": "5.00"}, headers=plugin)
    assert created.status_code == 201, created.json
    merchant_refund = client.post(f"/v1/invoices/{theirs['id']}/refunds", json={"amount": "5.00"}, headers=auth).json
    assert client.get(f"/v1/refunds/{merchant_refund['id']}", headers=plugin).status_code == 404
    assert [r["id"] for r in client.get("/v1/refunds", headers=plugin).json["data"]] == [created.json["id"]]
    assert len(client.get("/v1/refunds", headers=auth).json["data"]) == 2        # the merchant sees the store

    funded = client.post(f"/v1/test_helpers/refunds/{created.json['id']}/fund", json={}, headers=plugin)
    assert funded.status_code == 202
    poll_until_quiet("refunds")
    with db.connection_context():
        outbox.relay(now=utcnow(), grace=dt.timedelta(0))
        to_shop = [(row.event.type, row.event.payload["data"]["object"]["id"]) for row in
                   WebhookDelivery.select().join(WebhookEndpoint)
                   .where(WebhookEndpoint.public_id == shop["webhook_endpoint_id"])]
    refund_events = {kind: obj for kind, obj in to_shop if kind.startswith("refund.")}
    assert refund_events == {"refund.created": created.json["id"], "refund.succeeded": created.json["id"]}
    assert merchant_refund["id"] not in {obj for _kind, obj in to_shop}


def test_an_integration_key_refunds_only_to_the_buyers_own_asset_and_address(client, auth, bootstrap_auth):
    """A compromised shop must not have the merchant fund a refund to the shop's own address."""
    shop = connect(client, bootstrap_auth)
    plugin = bearer(shop["api_key"])
    mine = _paid(client, plugin, auth, external_order_id="wc-8")
    from models.invoices import Invoice

    with db.connection_context():                                     # the buyer's checkout values
        buyer = Invoice.get(Invoice.public_id == mine["id"]).__data__
    attacker = "0x" + "e" * 40
    for body, param in (({"refund_to": attacker}, "refund_to"), ({"asset": "sol", "refund_to": "7" * 44}, "asset"),
                        ({"asset": "usdc.base"}, "asset")):
        refused = client.post(f"/v1/invoices/{mine['id']}/refunds", json={"amount": "5.00", **body}, headers=plugin)
        assert refused.status_code == 403, (body, refused.json)
        assert (refused.json["error"]["code"], refused.json["error"]["param"]) == ("integration_key_forbidden", param)
    own = {"asset": buyer["origin_asset"], "refund_to": buyer["refund_to"]}
    created = client.post(f"/v1/invoices/{mine['id']}/refunds", json={"amount": "5.00", **own}, headers=plugin)
    assert created.status_code == 201, created.json
    assert (created.json["asset"], created.json["refund_to"]) == (own["asset"], own["refund_to"])
    # The merchant's own key may still send a refund elsewhere (a buyer who lost their wallet).
    elsewhere = client.post(f"/v1/invoices/{mine['id']}/refunds", json={"amount": "5.00", "refund_to": attacker},
                            headers=auth)
    assert elsewhere.status_code == 201, elsewhere.json
