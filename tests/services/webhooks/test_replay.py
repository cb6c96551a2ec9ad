"""Replaying missed events (docs/webhooks.md#replaying-missed-events): batches, the 10,000 cap,
Idempotency-Key, subscriptions, and the re-enable response that says what was missed."""
import datetime as dt
import json

from playhouse.test_utils import count_queries

from core import ids
from core.clock import isoformat, utcnow
from models.base import db
from models.events import Event
from models.webhooks import WebhookDelivery
from services.webhooks.webhook_replays import INSERT_BATCH, MAX_EVENTS
from tests import factories
from tests.blueprints.assertions import assert_error
from tests.services.webhooks.conftest import pump
from tests.services.webhooks.test_delivery import create_invoice, make_endpoint


def replay(client, auth, endpoint_id, body, **headers):
    return client.post(f"/v1/webhook-endpoints/{endpoint_id}/replay", json=body, headers={**auth, **headers})


def deliveries_of(endpoint_id):
    with db.connection_context():
        return list(WebhookDelivery.select().where(WebhookDelivery.target_key != endpoint_id)
                    .order_by(WebhookDelivery.created_at))


def seed_events(store, count, *, start, kind="invoice.paid"):
    """`count` already-dispatched events, one a second from `start`."""
    rows = []
    for n in range(count):
        public_id = ids.new_public_id("evt_")
        rows.append(dict(id=ids.new_uuid(), public_id=public_id, store=store.id, type=kind,
                         payload={"id": public_id, "type": kind}, created_at=start + dt.timedelta(seconds=n),
                         dispatched_at=start))
    with db.connection_context(), db.atomic():
        for first in range(0, count, 1000):
            Event.insert_many(rows[first:first + 1000]).execute()


def test_reenabling_says_what_was_missed_and_the_replay_sends_it(client, auth, receiver, policy):
    endpoint = make_endpoint(client, auth, receiver.url("/hook"), events=("invoice.created", "invoice.cancelled"))
    before = create_invoice(client, auth, external_order_id="before")
    pump(policy)
    receiver.wait_for(1)
    with db.connection_context():        # a second earlier, so the replay's whole-second `since` leaves it out
        Event.update(created_at=utcnow() - dt.timedelta(seconds=2)).execute()
    patched = client.patch(f"/v1/webhook-endpoints/{endpoint['id']}", json={"enabled": False}, headers=auth)
    assert patched.json["missed_events"] is None
    missed_ids = []
    for n in range(3):
        invoice = create_invoice(client, auth, external_order_id=f"while-down-{n}")
        missed_ids.append(invoice["id"])
    client.post(f"/v1/invoices/{missed_ids[0]}/cancel", headers=auth)
    assert pump(policy).succeeded == 0                       # disabled: nothing is sent

    enabled = client.patch(f"/v1/webhook-endpoints/{endpoint['id']}", json={"enabled": True}, headers=auth).json
    missed = enabled["missed_events"]
    assert missed["events"] == 4
    assert missed["replay"]["method"] == "POST"
    assert missed["replay"]["path"] == f"/v1/webhook-endpoints/{endpoint['id']}/replay"

    response = replay(client, auth, endpoint["id"], missed["replay"]["body"])
    assert response.status_code == 202, response.json
    assert response.json["events"] == 4 and response.json["id"].startswith("whr_")
    assert response.json["endpoint_id"] == endpoint["id"] and response.json["types"] == ["*"]
    assert pump(policy).succeeded == 4
    bodies = [json.loads(request.body) for request in receiver.wait_for(5)[1:]]
    assert sorted(body["data"]["object"]["external_order_id"] for body in bodies) == [
        "while-down-0", "while-down-0", "while-down-1", "while-down-2"]
    assert before["id"] not in [body["data"]["object"]["id"] for body in bodies]
    listed = client.get(f"/v1/webhook-endpoints/{endpoint['id']}/deliveries", headers=auth).json["data"]
    assert len(listed) == 5 and {row["status"] for row in listed} == {"succeeded"}
    # Nothing missed any more: a second disable/enable right away reports none.
    client.patch(f"/v1/webhook-endpoints/{endpoint['id']}", json={"enabled": False}, headers=auth)
    again = client.patch(f"/v1/webhook-endpoints/{endpoint['id']}", json={"enabled": True}, headers=auth).json
    assert again["missed_events"]["events"] == 0


def test_only_subscribed_kinds_and_the_types_asked_for(client, auth, store):
    endpoint = make_endpoint(client, auth, "https://hooks.example.test/a", events=("invoice.created",))
    since = isoformat(utcnow() - dt.timedelta(seconds=5))
    invoice = create_invoice(client, auth)
    client.post(f"/v1/invoices/{invoice['id']}/cancel", headers=auth)
    assert replay(client, auth, endpoint["id"], {"since": since}).json["events"] == 1
    assert replay(client, auth, endpoint["id"], {"since": since, "types": ["invoice.cancelled"]}).json["events"] == 0
    everything = make_endpoint(client, auth, "https://hooks.example.test/b")
    assert replay(client, auth, everything["id"], {"since": since}).json["events"] == 2
    until = replay(client, auth, everything["id"], {"since": since, "until": since})
    assert_error(until, 422, "validation_error", param="until")


def test_at_most_ten_thousand_events_inserted_in_batches(client, auth, store):
    endpoint = make_endpoint(client, auth, "https://hooks.example.test/a", events=("invoice.paid",))
    start = dt.datetime(2026, 3, 1)
    seed_events(store, MAX_EVENTS + 1, start=start)
    too_many = replay(client, auth, endpoint["id"], {"since": "2026-03-01T00:00:00Z"})
    assert_error(too_many, 422, "validation_error", param="until")
    assert "10000" in too_many.json["error"]["message"]
    assert deliveries_of(endpoint["id"]) == []               # all or nothing
    last = isoformat(start + dt.timedelta(seconds=MAX_EVENTS))   # exclusive: the 10,001st is left out
    with count_queries() as counter:
        response = replay(client, auth, endpoint["id"], {"since": "2026-03-01T00:00:00Z", "until": last})
    assert response.status_code == 202 and response.json["events"] == MAX_EVENTS
    inserts = [q for q in counter.get_queries() if q.msg[0].startswith('INSERT INTO "webhook_delivery"')]
    assert len(inserts) == MAX_EVENTS // INSERT_BATCH
    rows = deliveries_of(endpoint["id"])
    assert len(rows) == MAX_EVENTS and {row.status for row in rows} == {"pending"}
    assert {row.target_key for row in rows} == {response.json["id"]}


def test_idempotency_key_replays_the_first_answer(client, auth, store):
    endpoint = make_endpoint(client, auth, "https://hooks.example.test/a", events=("invoice.paid",))
    seed_events(store, 3, start=dt.datetime(2026, 3, 1))
    body = {"since": "2026-03-01T00:00:00Z"}
    first = replay(client, auth, endpoint["id"], body, **{"Idempotency-Key": "outage-7"})
    again = replay(client, auth, endpoint["id"], body, **{"Idempotency-Key": "outage-7"})
    assert first.status_code == again.status_code == 202
    assert again.json == first.json and again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert len(deliveries_of(endpoint["id"])) == 3
    other = replay(client, auth, endpoint["id"], {"since": "2026-03-02T00:00:00Z"}, **{"Idempotency-Key": "outage-7"})
    assert_error(other, 400, "idempotency_key_reused", param="Idempotency-Key")
    unkeyed = replay(client, auth, endpoint["id"], body)
    assert unkeyed.json["id"] != first.json["id"] and len(deliveries_of(endpoint["id"])) == 6


def test_refusals(client, auth, other_auth, store):
    endpoint = make_endpoint(client, auth, "https://hooks.example.test/a")
    path = endpoint["id"]
    assert_error(replay(client, auth, path, {}), 422, "validation_error", param="since")
    assert_error(replay(client, auth, path, {"since": "2026-03-01T00:00:00Z", "types": ["invoice.nope"]}),
                 422, "unknown_event_type", param="events")
    assert_error(replay(client, auth, path, {"since": "2026-03-01T00:00:00Z", "extra": 1}),
                 422, "validation_error", param="extra")
    assert_error(replay(client, other_auth, path, {"since": "2026-03-01T00:00:00Z"}),
                 404, "webhook_endpoint_not_found")
    read_only = {"Authorization": "Bearer " + factories.make_key(store, scopes=["webhooks:read"])}
    assert_error(replay(client, read_only, path, {"since": "2026-03-01T00:00:00Z"}), 403, "INSUFFICIENT_SCOPE")
    client.patch(f"/v1/webhook-endpoints/{path}", json={"enabled": False}, headers=auth)
    assert_error(replay(client, auth, path, {"since": "2026-03-01T00:00:00Z"}), 422, "validation_error")
