"""Real deliveries carry the Standard Webhooks headers, verified by that specification's maintained
Python library (`standardwebhooks`) with each secret exactly as Tender shows it: an endpoint's
`whsec_…` (both the new and the old one during a rotation's overlap), a storefront installation's
hex secret, and a store's legacy callback secret."""
import json

import pytest
from standardwebhooks import Webhook, WebhookVerificationError

from services.webhooks.webhook_signing import standard_signature, standard_signature_header
from tests import factories
from tests.services.integrations.conftest import bearer, connect
from tests.services.webhooks.conftest import pump
from tests.services.webhooks.test_delivery import create_invoice, make_endpoint
from tests.services.webhooks.test_webhook_signing import BODY, SECRET, TIMESTAMP

# The documented vector (docs/webhooks.md), for the Standard Webhooks header.
MESSAGE_ID = "evt_00000000000000000000000000000001"
EXPECTED_STANDARD = "v1,rmuTvfbeI/qI2VuWTjXL9heYdXj9uFcRTbhiAniXPbg="


def _verify(secret: str, request) -> dict:
    return Webhook(secret).verify(request.body, request.headers)


def test_the_documented_vector_is_what_the_library_computes():
    from datetime import datetime, timezone

    signed = Webhook(SECRET).sign(MESSAGE_ID, datetime.fromtimestamp(TIMESTAMP, tz=timezone.utc), BODY.decode())
    assert standard_signature(SECRET, MESSAGE_ID, TIMESTAMP, BODY) == signed == EXPECTED_STANDARD
    assert standard_signature_header(["whsec_" + "1" * 64, SECRET], MESSAGE_ID, TIMESTAMP, BODY).split(" ")[1] == signed


def test_an_endpoint_delivery_verifies_with_the_library_before_and_after_a_rotation(client, auth, receiver, policy):
    endpoint = make_endpoint(client, auth, receiver.url("/hook"))
    create_invoice(client, auth, external_order_id="first")
    pump(policy)
    [first] = receiver.wait_for(1)
    event = _verify(endpoint["secret"], first)
    headers = first.headers
    assert headers["webhook-id"] == event["id"] == headers["X-Tender-Event-Id"]
    assert headers["webhook-timestamp"] == headers["X-Tender-Timestamp"]
    assert headers["webhook-signature"].startswith("v1,") and " " not in headers["webhook-signature"]
    with pytest.raises(WebhookVerificationError):
        _verify("whsec_" + "0" * 64, first)

    rotated = client.post(f"/v1/webhook-endpoints/{endpoint['id']}/rotate-secret", headers=auth).json
    create_invoice(client, auth, external_order_id="second")
    pump(policy)
    second = receiver.wait_for(2)[1]
    assert len(second.headers["webhook-signature"].split(" ")) == 2      # the overlap: new and old
    assert _verify(rotated["secret"], second)["id"] == second.headers["webhook-id"]
    assert _verify(endpoint["secret"], second)["id"] == second.headers["webhook-id"]


def test_an_installation_delivery_verifies_with_its_hex_secret(client, store, receiver, policy):
    connection = connect(client, bearer(factories.make_key(store, kind="bootstrap")), webhook_url=receiver.url("/shop"))
    create_invoice(client, bearer(connection["api_key"]), external_order_id="wc-1")
    pump(policy)
    [request] = receiver.wait_for(1, path="/shop")
    assert _verify(connection["webhook_secret"], request)["type"] == "invoice.created"


def test_a_callback_url_delivery_verifies_with_the_store_callback_secret(store, receiver, policy):
    invoice = factories.make_invoice(store, callback_url=receiver.url("/callback"))
    pump(policy)
    [request] = receiver.wait_for(1, path="/callback")
    assert _verify(store.callback_secret, request)["data"]["object"]["id"] == invoice.public_id
    assert json.loads(request.body)["id"] == request.headers["webhook-id"]
