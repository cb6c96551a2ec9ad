"""A storefront installation's endpoint carries only its installation's invoices, does not count
toward the 16-endpoint limit, and goes away on disconnect (docs/webhooks.md#storefront-installations)."""
from core.clock import utcnow
from models.base import db
from models.integrations import Integration
from models.webhooks import WebhookDelivery, WebhookEndpoint
from services.webhooks import outbox
from tests.services.integrations.conftest import bearer, connect, route


def _fan_out():
    import datetime as dt

    with db.connection_context():
        outbox.relay(now=utcnow(), grace=dt.timedelta(0))
        rows = list(WebhookDelivery.select(WebhookDelivery, WebhookEndpoint.public_id.alias("endpoint_public_id"))
                    .join(WebhookEndpoint).objects())
    return rows


def test_the_installation_endpoint_gets_only_its_own_invoices(client, auth, bootstrap_auth):
    shop = connect(client, bootstrap_auth)
    mine = client.post("/v1/invoices", headers=bearer(shop["api_key"]),
                       json={"amount": "10.00", "external_order_id": "wc-1"}).get_json()
    theirs = client.post("/v1/invoices", headers=auth, json={"amount": "10.00", "external_order_id": "wc-1"}).get_json()
    merchant = client.post("/v1/webhook-endpoints", headers=auth,
                           json={"url": "https://93.184.216.34/all", "events": ["*"]}).get_json()
    rows = _fan_out()
    to_shop = {row.event.payload["data"]["object"]["id"] for row in rows
               if row.endpoint_public_id == shop["webhook_endpoint_id"]}
    to_merchant = {row.event.payload["data"]["object"]["id"] for row in rows if row.endpoint_public_id == merchant["id"]}
    assert to_shop == {mine["id"]}                    # never the API invoice with the same order id
    assert to_merchant == {mine["id"], theirs["id"]}  # the merchant's own endpoint sees the whole store


def test_it_does_not_count_toward_the_limit(client, auth, bootstrap_auth):
    connect(client, bootstrap_auth)
    statuses = [client.post("/v1/webhook-endpoints", headers=auth,
                            json={"url": f"https://93.184.216.34/{n}", "events": ["*"]}).status_code
                for n in range(17)]
    assert statuses == [201] * 16 + [422]


def test_disconnect_removes_it(client, auth, bootstrap_auth):
    shop = connect(client, bootstrap_auth)
    assert client.post(route("disconnect"), headers=bearer(shop["api_key"])).status_code == 200
    assert client.get(f"/v1/webhook-endpoints/{shop['webhook_endpoint_id']}", headers=auth).status_code == 404


def test_an_endpoint_left_by_an_earlier_disconnect_can_be_deleted(client, auth, bootstrap_auth):
    shop = connect(client, bootstrap_auth)
    with db.connection_context():      # what disconnect left behind before it removed the endpoint
        Integration.update(status="disconnected").execute()
    response = client.delete(f"/v1/webhook-endpoints/{shop['webhook_endpoint_id']}", headers=auth)
    assert response.status_code == 200, response.get_json()
