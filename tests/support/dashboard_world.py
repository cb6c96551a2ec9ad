"""A store holding one of every object a dashboard URL names by id, for the tests that walk every
route (tests/blueprints/dashboard/test_route_guards.py, test_escaping.py): another store's ids must
be 404s everywhere, a viewer's changes 403s everywhere, and text a merchant typed escaped everywhere;
and the walk itself: every dashboard route, with those ids in its URL."""
from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field

from flask import url_for
from werkzeug.routing.converters import AnyConverter

from core.clock import utcnow
from models.base import db
from models.events import Event
from models.integrations import Integration
from models.invoices import Invoice
from models.payment_links import PaymentLink
from models.people import User
from models.refunds import Refund
from models.stores import ApiKey, Store
from models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from services import integrations
from services.accounts import api_keys, audit
from services.webhooks import endpoints, outbox
from tests import factories
from tests.support.dashboard import make_member


def mark(field_name: str) -> str:
    """What a merchant (or an attacker) might type into `field_name`: a script naming the field."""
    return f'<script>alert("{field_name}")</script>'


@dataclass
class World:
    store: Store
    ids: dict = field(default_factory=dict)        # URL argument name -> the id that goes there
    rows: dict = field(default_factory=dict)       # URL argument name -> (model, primary key)

    def snapshot(self) -> dict:
        """Every row as it is now, to show that a refused request changed nothing."""
        return {name: model.get_by_id(key).__data__ for name, (model, key) in self.rows.items()}


def build_world(store: Store, *, member_email: str, marked: bool = False) -> World:
    """One invoice, payment link, refund, webhook endpoint and delivery, API key, member and
    storefront installation in `store`. `marked`: every field a merchant types holds mark(field)."""
    text = mark if marked else (lambda name: f"plain {name}")
    world = World(store)
    with db.connection_context():
        if marked:
            Store.update(name=text("store name")).where(Store.id == store.id).execute()
        invoice = factories.make_invoice(store, external_order_id=text("external_order_id"),
                                         metadata={text("metadata key"): text("metadata value")})
        paid = factories.make_invoice(store, status="paid", external_order_id=text("paid external_order_id"))
        refund = factories.make_refund(paid, reason=text("refund reason"))
        link = factories.make_payment_link(store, title=text("payment link title"))
        endpoint, delivery = _endpoint_and_delivery(store, invoice, text)
        key, _raw = api_keys.issue_key(store, kind="standard", now=utcnow())
        member = make_member(store, member_email, "admin")
        if marked:
            User.update(email=text("member email")).where(User.id == member.id).execute()
        installation = _installation(store, text, marked)
        audit.record(store, None, "store.rename", now=utcnow(), target=text("audit target"),
                     detail=text("audit detail"))
    world.ids = {"invoice_id": invoice.public_id, "link_id": link.public_id, "refund_id": refund.public_id,
                 "endpoint_id": endpoint.public_id, "delivery_id": delivery.public_id, "key_id": key.id,
                 "user_id": str(member.id), "platform": installation.platform}
    world.rows = {"invoice_id": (Invoice, invoice.id), "paid_invoice": (Invoice, paid.id),
                  "link_id": (PaymentLink, link.id), "refund_id": (Refund, refund.id),
                  "endpoint_id": (WebhookEndpoint, endpoint.id), "delivery_id": (WebhookDelivery, delivery.id),
                  "key_id": (ApiKey, key.id), "user_id": (User, member.id), "platform": (Integration, installation.id),
                  "store": (Store, store.id)}
    return world


def _endpoint_and_delivery(store, invoice, text):
    endpoint = endpoints.create_endpoint(store, {"url": "https://hooks.example.test/x", "events": ["*"],
                                                 "name": text("endpoint name")}, now=utcnow(), allow_private=True)
    # Stored as typed: the URL rule would refuse a script, but the page must not trust the rule.
    WebhookEndpoint.update(url=f"https://hooks.example.test/{text('endpoint url')}",
                           disabled_reason=text("endpoint disabled reason")).where(
        WebhookEndpoint.id == endpoint.id).execute()
    event = Event.select().where(Event.invoice == invoice.id).order_by(Event.created_at).first()
    outbox.fan_out(event.id, now=utcnow())
    delivery = WebhookDelivery.get((WebhookDelivery.store == store.id) & (WebhookDelivery.endpoint == endpoint.id))
    WebhookDelivery.update(status="failed", attempts=1, last_status_code=500,
                           last_response_excerpt=text("response excerpt")).where(
        WebhookDelivery.id == delivery.id).execute()
    WebhookAttempt.create(id=uuid.uuid4(), delivery=delivery.id, number=1, outcome="failed", started_at=utcnow(),
                          status_code=500, latency_ms=12, error=text("attempt error"),
                          response_excerpt=text("response excerpt"))
    return WebhookEndpoint.get_by_id(endpoint.id), WebhookDelivery.get_by_id(delivery.id)


def _installation(store, text, marked):
    bootstrap, _raw = api_keys.issue_key(store, kind="bootstrap", now=utcnow())
    connection = integrations.connect(store, bootstrap, "woocommerce", {
        "site_url": f"https://shop-{store.id.hex[:8]}.example.com", "webhook_url": "https://shop.example.com/hook",
        "plugin_version": text("plugin version")[:64]}, now=utcnow(), allow_private=True)
    if marked:
        Integration.update(site_url=text("installation site url"), webhook_url=text("installation webhook url")
                           ).where(Integration.id == connection.integration.id).execute()
    return connection.integration


def dashboard_rules(app, method: str):
    """The dashboard's routes that answer `method`, read from the app's URL map."""
    return sorted((rule for rule in app.url_map.iter_rules()
                   if rule.endpoint.startswith("dashboard.") and method in rule.methods), key=lambda rule: rule.rule)


def paths_of(app, rules, ids: dict) -> list[str]:
    """Each rule's URL with `ids` for its arguments, once per choice of its any() arguments."""
    paths = []
    with app.test_request_context():
        for rule in rules:
            names = sorted(rule.arguments)
            choices = [sorted(rule._converters[name].items) if isinstance(rule._converters[name], AnyConverter)
                       else [ids[name]] for name in names]
            paths += [url_for(rule.endpoint, **dict(zip(names, values))) for values in itertools.product(*choices)]
    return paths
