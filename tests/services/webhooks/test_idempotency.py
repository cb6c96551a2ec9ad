"""`Idempotency-Key` on the webhook routes (docs/retries.md). Create and rotate answer a secret shown
once: it is never stored in the idempotency record (only its digest), and a replay shows the same
secret again, read from the endpoint, byte for byte the first answer (docs/decisions.md)."""
from models.base import db
from models.payment_links import IdempotencyKey
from models.webhooks import WebhookEndpoint
from tests.services.webhooks.conftest import pump
from tests.services.webhooks.test_delivery import create_invoice, delivery_rows, make_endpoint


def keyed(client, auth, path, key, body=None):
    return client.post(path, json=body if body is not None else {}, headers={**auth, "Idempotency-Key": key})


def stored_endpoint(public_id):
    with db.connection_context():
        return WebhookEndpoint.get(WebhookEndpoint.public_id == public_id)


def stored_responses():
    with db.connection_context():
        return " ".join(row.response_body for row in IdempotencyKey.select())


def test_a_replayed_create_is_the_first_answer_byte_for_byte_and_keeps_its_secret(client, auth, receiver):
    body = {"url": receiver.url("/hook"), "events": ["*"]}
    first = keyed(client, auth, "/v1/webhook-endpoints", "wh-1", body)
    assert first.status_code == 201
    assert first.json["secret"] not in stored_responses()
    again = keyed(client, auth, "/v1/webhook-endpoints", "wh-1", body)
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.get_data() == first.get_data()                      # the same secret too
    endpoint = stored_endpoint(first.json["id"])
    assert (endpoint.secret, endpoint.previous_secret) == (first.json["secret"], None)   # still the one that signs
    assert first.json["secret"] not in stored_responses()
    with db.connection_context():
        assert WebhookEndpoint.select().count() == 1


def test_a_replayed_rotation_keeps_the_secret_the_merchant_holds(client, auth, receiver):
    created = make_endpoint(client, auth, receiver.url("/hook"))
    path = f"/v1/webhook-endpoints/{created['id']}/rotate-secret"
    rotated = keyed(client, auth, path, "rot-1")
    again = keyed(client, auth, path, "rot-1")
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert again.get_data() == rotated.get_data()
    endpoint = stored_endpoint(created["id"])
    assert endpoint.secret == rotated.json["secret"]
    assert endpoint.previous_secret == created["secret"]              # still signs for its 24 hours
    # Rotated again since: replaying the old key must not replace the secret now in use.
    current = client.post(path, headers=auth).json["secret"]
    stale = keyed(client, auth, path, "rot-1")
    assert (stale.status_code, stale.json["error"]["code"]) == (409, "idempotency_key_in_use")
    assert stored_endpoint(created["id"]).secret == current


def test_a_retried_redeliver_sends_once_more_not_twice(client, auth, receiver, policy):
    make_endpoint(client, auth, receiver.url("/hook"))
    create_invoice(client, auth)
    pump(policy)
    [row] = delivery_rows()
    path = f"/v1/webhook-deliveries/{row.public_id}/redeliver"
    first, again = keyed(client, auth, path, "again-1"), keyed(client, auth, path, "again-1")
    assert first.status_code == again.status_code == 202 and again.headers["Idempotent-Replayed"] == "true"
    pump(policy)
    receiver.wait_for(2)
    [row] = delivery_rows()
    assert row.status == "succeeded" and row.attempts == 2 and len(receiver.requests) == 2
