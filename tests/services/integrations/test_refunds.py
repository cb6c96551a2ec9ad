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
