"""Webhooks in the dashboard: an endpoint's secret shown once, its deliveries with what was sent and
what came back (escaped), redeliver, and who may do which."""
from __future__ import annotations

import datetime as dt
import re
import uuid

import pytest

from core.clock import utcnow
from models.base import db
from models.events import Event
from models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from services.webhooks import endpoints, outbox
from tests import factories
from tests.blueprints.dashboard.conftest import SCRIPT
from tests.support.dashboard import make_member, post, sign_in


@pytest.fixture
def developer(client, store):
    make_member(store, "dev@example.com", "developer")
    sign_in(client, "dev@example.com")
    return client


def _endpoint_with_a_failed_delivery(store, name=SCRIPT):
    with db.connection_context():
        endpoint = endpoints.create_endpoint(store, {"url": "https://hooks.example.test/x", "events": ["*"],
                                                     "name": name}, now=utcnow(), allow_private=True)
        factories.make_invoice(store, external_order_id=SCRIPT)
        outbox.fan_out(Event.get().id, now=utcnow())
        delivery = WebhookDelivery.get()
        WebhookDelivery.update(status="failed", attempts=1, last_status_code=500).execute()
        WebhookAttempt.create(id=uuid.uuid4(), delivery=delivery.id, number=1, outcome="failed", started_at=utcnow(),
                              status_code=500, latency_ms=12, error=SCRIPT, response_excerpt=SCRIPT)
    return endpoint, delivery


def test_a_developer_adds_an_endpoint_and_sees_its_secret_once(developer):
    answer = post(developer, "/dashboard/webhooks", {"name": "Shop", "url": "https://hooks.example.test/tender",
                                                     "events": ["invoice.paid"]}, form_page="/dashboard/webhooks")
    secret = re.search(r'value="(whsec_[0-9a-f]{64})"', answer.get_data(as_text=True)).group(1)
    endpoint = WebhookEndpoint.get()
    assert endpoint.secret == secret and endpoint.events == ["invoice.paid"]
    assert secret not in developer.get("/dashboard/webhooks").get_data(as_text=True)
    assert secret not in developer.get(f"/dashboard/webhooks/{endpoint.public_id}").get_data(as_text=True)


def test_a_bad_url_is_refused_with_the_apis_reason(developer):
    answer = post(developer, "/dashboard/webhooks", {"url": "ftp://nope"}, form_page="/dashboard/webhooks")
    assert answer.status_code == 400 and WebhookEndpoint.select().count() == 0


def test_a_delivery_shows_what_was_sent_and_what_came_back_escaped(developer, store):
    endpoint, delivery = _endpoint_with_a_failed_delivery(store)
    for path in ("/dashboard/webhooks", f"/dashboard/webhooks/{endpoint.public_id}",
                 f"/dashboard/webhooks/deliveries/{delivery.public_id}", "/dashboard/"):
        page = developer.get(path)
        text = page.get_data(as_text=True)
        assert page.status_code == 200 and SCRIPT not in text, path
    detail = developer.get(f"/dashboard/webhooks/deliveries/{delivery.public_id}").get_data(as_text=True)
    assert "invoice.created" in detail and "HTTP 500" in detail and "&lt;script&gt;" in detail
    invoice_id = Event.get().payload["data"]["object"]["id"]
    assert invoice_id in detail.split("What was sent", 1)[1]          # the body that was sent


def test_redeliver_queues_the_delivery_again(developer, store):
    _endpoint, delivery = _endpoint_with_a_failed_delivery(store)
    assert post(developer, f"/dashboard/webhooks/deliveries/{delivery.public_id}/redeliver").status_code == 302
    assert WebhookDelivery.get_by_id(delivery.id).status == "pending"


def test_rotating_a_secret_asks_for_the_password_after_five_minutes(developer, store, monkeypatch):
    from blueprints.dashboard import session_state

    endpoint, _delivery = _endpoint_with_a_failed_delivery(store, name="Shop")
    later = utcnow() + dt.timedelta(minutes=6)
    monkeypatch.setattr(session_state, "utcnow", lambda: later)
    answer = post(developer, f"/dashboard/webhooks/{endpoint.public_id}/rotate-secret")
    assert "/dashboard/confirm" in answer.headers["Location"]
    assert WebhookEndpoint.get().secret == endpoint.secret


def test_another_stores_endpoint_and_delivery_are_404s(developer, other_store):
    endpoint, delivery = _endpoint_with_a_failed_delivery(other_store)
    assert developer.get(f"/dashboard/webhooks/{endpoint.public_id}").status_code == 404
    assert developer.get(f"/dashboard/webhooks/deliveries/{delivery.public_id}").status_code == 404
    assert post(developer, f"/dashboard/webhooks/deliveries/{delivery.public_id}/redeliver").status_code == 404
    assert post(developer, f"/dashboard/webhooks/{endpoint.public_id}/delete").status_code == 404
    assert WebhookDelivery.get_by_id(delivery.id).status == "failed"


def test_a_viewer_reads_deliveries_and_changes_nothing(client, store):
    endpoint, delivery = _endpoint_with_a_failed_delivery(store)
    make_member(store, "viewer@example.com", "viewer")
    sign_in(client, "viewer@example.com")
    page = client.get(f"/dashboard/webhooks/deliveries/{delivery.public_id}")
    assert page.status_code == 200 and "Send it again" not in page.get_data(as_text=True)
    for path in (f"/dashboard/webhooks/deliveries/{delivery.public_id}/redeliver",
                 f"/dashboard/webhooks/{endpoint.public_id}/disable", f"/dashboard/webhooks/{endpoint.public_id}/delete"):
        assert post(client, path).status_code == 403
    assert post(client, "/dashboard/webhooks", {"url": "https://x.example.test/"}).status_code == 403
    assert WebhookEndpoint.get().enabled and WebhookDelivery.get().status == "failed"


def test_a_test_event_sends_the_newest_event_again(developer, store):
    endpoint, delivery = _endpoint_with_a_failed_delivery(store, name="Shop")
    assert post(developer, f"/dashboard/webhooks/{endpoint.public_id}/test").status_code == 302
    again = WebhookDelivery.select().where(WebhookDelivery.id != delivery.id).get()
    assert (again.event_id, again.endpoint_id, again.status) == (delivery.event_id, endpoint.id, "pending")


def test_a_test_event_without_any_event_says_what_to_do(developer, store):
    with db.connection_context():
        endpoint = endpoints.create_endpoint(store, {"url": "https://hooks.example.test/x", "events": ["*"]},
                                             now=utcnow(), allow_private=True)
    answer = post(developer, f"/dashboard/webhooks/{endpoint.public_id}/test")
    assert answer.status_code == 400 and "no event to send yet" in answer.get_data(as_text=True)
