"""`Idempotency-Key` on create payment link (docs/api.md#idempotency): replay, reuse, in-progress, expiry."""
import datetime as dt
import json

import pytest

from blueprints.idempotency import api_key_scope
from core import ids
from core.clock import utcnow
from infra import idempotency
from models.base import db
from models.payment_links import IdempotencyKey, PaymentLink
from models.stores import ApiKey

BODY = {"title": "T-shirt", "amount_mode": "fixed_amount", "amount": "25.00"}


def create(client, auth, key, body=BODY):
    return client.post("/v1/payment-links", json=body, headers={**auth, "Idempotency-Key": key})


def links():
    with db.connection_context():
        return [link.public_id for link in PaymentLink.select()]


def test_same_key_and_body_replays_the_first_response(client, auth):
    first = create(client, auth, "order-1")
    assert first.status_code == 201 and "Idempotent-Replayed" not in first.headers
    client.patch(f"/v1/payment-links/{first.json['id']}", json={"title": "Renamed"}, headers=auth)
    again = create(client, auth, "order-1")
    assert again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_data() == first.get_data()   # the first response, byte for byte, not the link as it is now
    assert links() == [first.json["id"]]


def test_key_order_and_spacing_do_not_change_the_fingerprint(client, auth):
    first = create(client, auth, "k")
    raw = json.dumps(dict(reversed(list(BODY.items()))), indent=3)
    again = client.post("/v1/payment-links", data=raw,
                        headers={**auth, "Idempotency-Key": "k", "Content-Type": "application/json"})
    assert again.headers.get("Idempotent-Replayed") == "true" and again.json["id"] == first.json["id"]


@pytest.mark.parametrize("other", [{**BODY, "amount": "26.00"}, {**BODY, "public_visible": True}])
def test_same_key_with_another_body_is_refused(client, auth, other):
    create(client, auth, "k")
    response = create(client, auth, "k", other)
    assert response.status_code == 400
    assert (response.json["error"]["code"], response.json["error"]["param"]) == ("idempotency_key_reused",
                                                                                 "Idempotency-Key")
    assert len(links()) == 1


def test_keys_belong_to_one_store(client, auth, other_auth):
    mine, theirs = create(client, auth, "shared"), create(client, other_auth, "shared")
    assert "Idempotent-Replayed" not in theirs.headers
    assert mine.json["id"] != theirs.json["id"] and len(links()) == 2


def test_without_a_key_every_create_makes_a_link(client, auth):
    client.post("/v1/payment-links", json=BODY, headers=auth)
    client.post("/v1/payment-links", json=BODY, headers=auth)
    assert len(links()) == 2


def _insert_key(store, key, *, status, locked_at, expires_at=None, body=BODY):
    now = utcnow()
    with db.connection_context():
        api_key = ApiKey.get_or_none(ApiKey.store == store.id)          # the store's one key: `auth`'s
        scope = api_key_scope(api_key) if api_key else ""
        IdempotencyKey.create(id=ids.new_uuid(), store=store.id, key=key, scope=scope,
                              fingerprint=idempotency.fingerprint("POST /v1/payment-links", body), status=status,
                              locked_at=locked_at, response_status=201 if status == "complete" else None,
                              response_body='{"id":"plink_old"}' if status == "complete" else None,
                              created_at=locked_at, expires_at=expires_at or now + dt.timedelta(hours=24))


def test_a_key_still_in_progress_answers_409(client, auth, store):
    # Renewed "a minute from now": a claim renewed just now would lapse (ABANDONED_AFTER, 5 s) if a
    # loaded machine stalled this test that long before its request, and be taken over (a 201).
    _insert_key(store, "busy", status="in_progress", locked_at=utcnow() + dt.timedelta(minutes=1))
    response = create(client, auth, "busy")
    assert response.status_code == 409
    assert (response.json["error"]["type"], response.json["error"]["code"]) == ("conflict", "idempotency_key_in_use")
    assert links() == []


def test_an_abandoned_claim_is_taken_over(client, auth, store):
    _insert_key(store, "crashed", status="in_progress", locked_at=utcnow() - dt.timedelta(minutes=2))
    response = create(client, auth, "crashed")
    assert response.status_code == 201 and "Idempotent-Replayed" not in response.headers
    assert create(client, auth, "crashed").json == response.json


def test_a_key_is_forgotten_after_24_hours(client, auth, store):
    old = utcnow() - dt.timedelta(hours=25)
    _insert_key(store, "yesterday", status="complete", locked_at=old, expires_at=old + dt.timedelta(hours=24),
                body={"different": True})
    response = create(client, auth, "yesterday")
    assert response.status_code == 201 and response.json["id"] != "plink_old"
    assert "Idempotent-Replayed" not in response.headers


def test_a_failed_create_does_not_keep_the_key(client, auth):
    refused = create(client, auth, "k", {**BODY, "currency": "GBP"})   # passes the schema, fails in the service
    assert refused.status_code == 400 and refused.json["error"]["param"] == "currency"
    invalid = create(client, auth, "k", {**BODY, "amount": 25})
    assert invalid.status_code == 400
    with db.connection_context():
        assert IdempotencyKey.select().count() == 0
    assert create(client, auth, "k").status_code == 201


@pytest.mark.parametrize("key", ["", "clé", "tab\there", "x" * 256])
def test_malformed_keys_are_refused(client, auth, key):
    response = client.post("/v1/payment-links", json=BODY, headers={**auth, "Idempotency-Key": key})
    assert response.status_code == 400
    assert (response.json["error"]["code"], response.json["error"]["param"]) == ("validation_error",
                                                                                 "Idempotency-Key")
    assert links() == []


def test_longest_printable_key_is_accepted(client, auth):
    assert create(client, auth, "~" * 255).status_code == 201


def test_purge_removes_only_expired_keys(app, store):
    now = utcnow()
    _insert_key(store, "old", status="complete", locked_at=now - dt.timedelta(hours=30),
                expires_at=now - dt.timedelta(hours=6))
    _insert_key(store, "fresh", status="complete", locked_at=now)
    with db.connection_context():
        assert idempotency.purge_expired(now=now) == 1
        assert [row.key for row in IdempotencyKey.select()] == ["fresh"]
