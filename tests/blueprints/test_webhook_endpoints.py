import dataclasses

import pytest

from core.clock import utcnow
from core.errors import DomainError
from models.base import db
from models.webhooks import WebhookEndpoint
from services.webhooks import endpoints
from tests import factories

BODY = {"name": "Orders", "url": "https://hooks.example.test/tender", "events": ["invoice.paid"]}


def create(client, auth, **over):
    return client.post("/v1/webhook-endpoints", json={**BODY, **over}, headers=auth)


def test_create_shows_the_secret_once(client, auth):
    response = create(client, auth)
    assert response.status_code == 201
    body = response.json
    assert body["id"].startswith("wh_") and len(body["id"]) == 35
    assert body["secret"].startswith("whsec_") and len(body["secret"]) == 6 + 64
    assert body["events"] == ["invoice.paid"] and body["enabled"] is True and body["disabled_reason"] is None
    fetched = client.get(f"/v1/webhook-endpoints/{body['id']}", headers=auth).json
    assert "secret" not in fetched
    assert fetched["url"] == BODY["url"] and fetched["name"] == "Orders"
    listed = client.get("/v1/webhook-endpoints", headers=auth).json
    assert listed["has_more"] is False and listed["next_cursor"] is None
    assert [item["id"] for item in listed["data"]] == [body["id"]]
    assert "secret" not in listed["data"][0]


@pytest.mark.parametrize("over, code, param", [
    ({"url": "ftp://hooks.example.test/x"}, "invalid_webhook_url", "url"),
    ({"url": "not a url"}, "invalid_webhook_url", "url"),
    ({"events": ["invoice.exploded"]}, "unknown_event_type", "events"),
    ({"events": []}, "validation_error", "events"),
    ({"events": "invoice.paid"}, "validation_error", "events"),
    ({"colour": "blue"}, "validation_error", "colour"),
    ({"url": None}, "validation_error", "url"),
    ({"name": "x" * 101}, "validation_error", "name"),
])
def test_every_body_problem_is_a_422(client, auth, over, code, param):
    response = create(client, auth, **over)
    assert response.status_code == 422, response.json
    assert response.json["error"]["code"] == code
    assert response.json["error"]["type"] == "unprocessable_entity"
    assert response.json["error"]["param"] == param


@pytest.mark.parametrize("body", [b"{", b"[1]", b"not json"])
def test_a_body_that_is_not_a_json_object_is_a_422_too(client, auth, body):
    """As docs/webhooks.md says: every body problem on these routes is a 422."""
    created = client.post("/v1/webhook-endpoints", data=body, content_type="application/json", headers=auth)
    assert (created.status_code, created.json["error"]["code"]) == (422, "invalid_json")
    assert created.json["error"]["type"] == "unprocessable_entity"
    endpoint = create(client, auth).json
    for path, method in ((f"/v1/webhook-endpoints/{endpoint['id']}", client.patch),
                         (f"/v1/webhook-endpoints/{endpoint['id']}/replay", client.post)):
        answer = method(path, data=body, content_type="application/json", headers=auth)
        assert (answer.status_code, answer.json["error"]["code"]) == (422, "invalid_json"), path


def test_missing_url_is_a_422(client, auth):
    response = client.post("/v1/webhook-endpoints", json={"events": ["*"]}, headers=auth)
    assert response.status_code == 422 and response.json["error"]["param"] == "url"


def test_the_seventeenth_endpoint_is_refused(client, auth):
    for number in range(16):
        assert create(client, auth, name=f"n{number}").status_code == 201
    response = create(client, auth)
    assert response.status_code == 422
    assert response.json["error"]["code"] == "webhook_endpoint_limit"
    page = client.get("/v1/webhook-endpoints?limit=10", headers=auth).json
    assert len(page["data"]) == 10 and page["has_more"] is True
    rest = client.get(f"/v1/webhook-endpoints?limit=10&starting_after={page['next_cursor']}", headers=auth).json
    assert len(rest["data"]) == 6 and rest["has_more"] is False


def test_update_rules_are_the_create_rules(client, auth):
    endpoint = create(client, auth).json
    path = f"/v1/webhook-endpoints/{endpoint['id']}"
    assert client.patch(path, json={"events": ["nope"]}, headers=auth).json["error"]["code"] == "unknown_event_type"
    assert client.patch(path, json={"url": "http://x.test/"}, headers=auth).status_code == 200  # private allowed
    assert client.patch(path, json={"secret": "mine"}, headers=auth).status_code == 422
    updated = client.patch(path, json={"events": ["*"], "enabled": False, "name": "All"}, headers=auth)
    assert updated.status_code == 200
    assert updated.json["events"] == ["*"] and updated.json["enabled"] is False
    assert updated.json["disabled_reason"] == "disabled by the merchant"
    enabled = client.patch(path, json={"enabled": True}, headers=auth).json
    assert enabled["enabled"] is True and enabled["disabled_reason"] is None


def test_delete_and_not_found(client, auth, other_auth):
    endpoint = create(client, auth).json
    path = f"/v1/webhook-endpoints/{endpoint['id']}"
    assert client.get(path, headers=other_auth).status_code == 404
    assert client.delete(path, headers=other_auth).status_code == 404
    assert client.delete(path, headers=auth).json == {"id": endpoint["id"], "deleted": True}
    response = client.get(path, headers=auth)
    assert response.status_code == 404 and response.json["error"]["code"] == "webhook_endpoint_not_found"
    assert client.get("/v1/webhook-endpoints/wh_bad", headers=auth).status_code == 404
    assert client.get("/v1/webhook-endpoints/inv_" + "a" * 32, headers=auth).status_code == 404


def test_rotate_returns_a_new_secret_and_keeps_the_old_one_for_a_day(client, auth):
    endpoint = create(client, auth).json
    rotated = client.post(f"/v1/webhook-endpoints/{endpoint['id']}/rotate-secret", headers=auth)
    assert rotated.status_code == 200
    assert rotated.json["secret"].startswith("whsec_") and rotated.json["secret"] != endpoint["secret"]
    assert rotated.json["previous_secret_expires_at"].endswith("Z")
    with db.connection_context():
        row = WebhookEndpoint.get(WebhookEndpoint.public_id == endpoint["id"])
    assert row.secret == rotated.json["secret"] and row.previous_secret == endpoint["secret"]


def test_a_rotation_racing_another_keeps_the_secret_the_other_showed(client, auth, store):
    """Two rotations that both read the endpoint before either wrote: the later write must keep the
    earlier one's secret (already shown to its caller) as the previous one, not the secret both read."""
    endpoint = create(client, auth).json
    with db.connection_context():
        read_by_both = endpoints.get_endpoint(store, endpoint["id"])
        first = endpoints.rotate_secret(read_by_both, now=utcnow())
        second = endpoints.rotate_secret(read_by_both, now=utcnow())
        row = WebhookEndpoint.get_by_id(read_by_both.id)
    assert (row.secret, row.previous_secret) == (second.shown_secret, first.shown_secret)


def test_scopes(client, store):
    reader = {"Authorization": f"Bearer {factories.make_key(store, scopes=['webhooks:read'])}"}
    invoices_only = {"Authorization": f"Bearer {factories.make_key(store, scopes=['invoices:read'])}"}
    assert client.get("/v1/webhook-endpoints", headers=reader).status_code == 200
    response = create(client, reader)
    assert response.status_code == 403 and response.json["error"]["code"] == "INSUFFICIENT_SCOPE"
    assert client.get("/v1/webhook-endpoints", headers=invoices_only).status_code == 403
    assert client.get("/v1/events", headers=invoices_only).status_code == 403
    assert client.get("/v1/events", headers=reader).status_code == 403
    assert client.get("/v1/webhook-endpoints").status_code == 401


def test_events_api_lists_and_reads_the_store_events(client, auth, other_auth):
    invoice = client.post("/v1/invoices", json={"amount": "12.50", "external_order_id": "A-1"}, headers=auth).json
    client.post(f"/v1/invoices/{invoice['id']}/cancel", headers=auth)
    listed = client.get("/v1/events", headers=auth).json
    assert [event["type"] for event in listed["data"]] == ["invoice.cancelled", "invoice.created"]
    created = listed["data"][1]
    assert created["api_version"] == "1.0.0" and created["data"]["object"]["id"] == invoice["id"]
    assert created["data"]["object"]["status"] == "pending"
    assert client.get(f"/v1/events/{created['id']}", headers=auth).json == created
    assert client.get(f"/v1/events/{created['id']}", headers=other_auth).status_code == 404
    assert client.get("/v1/events?type=invoice.cancelled", headers=auth).json["data"][0]["type"] == "invoice.cancelled"
    assert client.get("/v1/events?type=invoice.nope", headers=auth).status_code == 400
    missing = client.get("/v1/events/evt_" + "0" * 32, headers=auth)
    assert missing.status_code == 404 and missing.json["error"]["code"] == "event_not_found"


@pytest.mark.parametrize("url", [
    "http://hooks.example.test/x",            # not https
    "https://127.0.0.1/x", "https://[::1]/x", "https://localhost/x",
    "https://10.0.0.8/x", "https://192.168.1.1/x", "https://169.254.169.254/latest",
    "https://224.0.0.1/x", "https://[::ffff:127.0.0.1]/x",
])
def test_private_and_plain_http_targets_are_refused_without_the_flag(url):
    with pytest.raises(DomainError) as refused:
        endpoints.check_target_url(url, allow_private=False)
    assert refused.value.code == "invalid_webhook_url"


def test_public_https_targets_pass_and_the_flag_lifts_the_rules():
    assert endpoints.check_target_url("https://93.184.216.34/hook", allow_private=False)
    assert endpoints.check_target_url("http://127.0.0.1:9/hook", allow_private=True)


def test_create_route_refuses_private_targets_when_the_flag_is_off(app, client, auth, settings):
    strict = dataclasses.replace(settings, allow_private_webhook_urls=False)
    app.extensions["tender.settings"] = strict
    try:
        response = create(client, auth, url="https://127.0.0.1/hook")
        assert response.status_code == 422 and response.json["error"]["code"] == "invalid_webhook_url"
        assert create(client, auth, url="https://93.184.216.34/hook").status_code == 201
    finally:
        app.extensions["tender.settings"] = settings
