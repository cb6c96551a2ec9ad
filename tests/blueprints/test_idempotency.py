"""`Idempotency-Key` on every POST that creates or changes something (docs/retries.md): one
implementation (blueprints/idempotency.py over infra/idempotency.py), so each route here only
shows that a retry does not do the work twice."""
import pytest

from models.base import db
from models.invoices import Invoice
from models.payment_links import IdempotencyKey
from tests import factories

# Retried by rules of their own (docs/retries.md): connect reconnects, disconnect revokes its key.
OWN_RETRY_RULES = {"/v1/integration/woocommerce/connect", "/v1/integration/woocommerce/disconnect"}


def invoice_count():
    with db.connection_context():
        return Invoice.select().count()


def post(client, path, key, body=None, **kwargs):
    headers = {**kwargs.pop("headers", {}), "Idempotency-Key": key}
    return client.post(path, json=body if body is not None else {}, headers=headers, **kwargs)


def test_every_post_route_takes_the_header(app):
    rules = [rule for rule in app.url_map.iter_rules() if "POST" in rule.methods and rule.rule.startswith("/v1/")]
    assert rules
    missing = [rule.rule for rule in rules if rule.rule not in OWN_RETRY_RULES
               and not getattr(app.view_functions[rule.endpoint], "idempotent", False)]
    assert missing == []
    document = app.test_client().get("/v1/openapi.json").json
    for rule in rules:
        path = rule.rule.replace("<", "{").replace(">", "}")
        names = [p.get("$ref", "").rsplit("/", 1)[-1] for p in document["paths"][path]["post"]["parameters"]]
        assert ("IdempotencyKey" in names) == (rule.rule not in OWN_RETRY_RULES), rule.rule


def test_a_retried_create_invoice_makes_one_invoice(client, auth):
    body = {"amount": "25.00", "currency": "USD"}
    first = post(client, "/v1/invoices", "order-1001", body, headers=auth)
    again = post(client, "/v1/invoices", "order-1001", body, headers=auth)
    assert (first.status_code, again.status_code) == (201, 201)
    assert "Idempotent-Replayed" not in first.headers and again.headers["Idempotent-Replayed"] == "true"
    assert again.get_data() == first.get_data() and invoice_count() == 1
    post(client, "/v1/invoices", "order-1002", body, headers=auth)
    assert invoice_count() == 2                       # a new key is a new request


def test_create_invoice_answers_key_errors_in_its_legacy_shape(client, auth):
    post(client, "/v1/invoices", "k", {"amount": "25.00"}, headers=auth)
    response = post(client, "/v1/invoices", "k", {"amount": "26.00"}, headers=auth)
    assert response.status_code == 400
    assert (response.json["code"], response.json["details"]["param"]) == ("idempotency_key_reused", "Idempotency-Key")
    bad = post(client, "/v1/invoices", "\u00e9t\u00e9", {"amount": "25.00"}, headers=auth)
    assert (bad.status_code, bad.json["code"]) == (400, "validation_error") and invoice_count() == 1


def test_a_failed_request_is_not_remembered(client, auth):
    refused = post(client, "/v1/invoices", "k", {"amount": "0"}, headers=auth)
    assert refused.status_code == 400
    with db.connection_context():
        assert IdempotencyKey.select().count() == 0


def test_the_same_key_on_another_route_is_another_request(client, auth, store):
    invoice = factories.make_invoice(store)
    post(client, "/v1/invoices", "k", {"amount": "25.00"}, headers=auth)
    response = post(client, f"/v1/invoices/{invoice.public_id}/cancel", "k", headers=auth)
    assert (response.status_code, response.json["code"] if "code" in response.json else
            response.json["error"]["code"]) == (400, "idempotency_key_reused")


def test_a_retried_cancel_replays_its_answer(client, auth, store):
    invoice = factories.make_invoice(store)
    path = f"/v1/invoices/{invoice.public_id}/cancel"
    first, again = post(client, path, "cancel-1", headers=auth), post(client, path, "cancel-1", headers=auth)
    assert first.status_code == again.status_code == 200 and again.json["status"] == "cancelled"
    assert again.headers["Idempotent-Replayed"] == "true"
    # Without the key the retry is told the truth: it is not open any more.
    assert client.post(path, headers=auth).json["error"]["code"] == "invoice_not_cancellable"


def test_a_retried_deactivation_replays(client, auth, store):
    link = factories.make_payment_link(store)
    path = f"/v1/payment-links/{link.public_id}/deactivate"
    first, again = post(client, path, "off-1", headers=auth), post(client, path, "off-1", headers=auth)
    assert again.headers["Idempotent-Replayed"] == "true" and again.get_data() == first.get_data()


def test_a_retried_test_helper_payment_records_one_deposit(client, auth, store):
    invoice = factories.make_invoice(store)
    path = f"/v1/test_helpers/invoices/{invoice.public_id}/pay"
    first, again = post(client, path, "pay-1", headers=auth), post(client, path, "pay-1", headers=auth)
    assert first.status_code == again.status_code == 202 and again.headers["Idempotent-Replayed"] == "true"
    assert again.get_data() == first.get_data()


def test_a_buyers_retried_checkout_of_a_reusable_link_makes_one_invoice(client, store):
    link = factories.make_payment_link(store, allow_multiple_payments=True)
    path = f"/v1/public/payment-links/{link.plpub_id}/checkout"
    first, again = post(client, path, "buyer-1"), post(client, path, "buyer-1")
    assert first.status_code == again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json["invoice_id"] == first.json["invoice_id"] and invoice_count() == 1
    # Kept per link token and client: another buyer who happens to send the same key is another request.
    other = post(client, path, "buyer-1", environ_base={"REMOTE_ADDR": "192.0.2.7"})
    assert other.status_code == 201 and "Idempotent-Replayed" not in other.headers
    assert other.json["invoice_id"] != first.json["invoice_id"] and invoice_count() == 2


def test_a_buyer_key_for_an_unknown_link_is_a_404(client):
    response = post(client, "/v1/public/payment-links/plpub_" + "0" * 32 + "/checkout", "k")
    assert (response.status_code, response.json["error"]["code"]) == (404, "payment_link_not_found")


@pytest.mark.parametrize("key", ["", "x" * 256, "tab\there"])
def test_a_malformed_key_is_refused(client, store, key):
    link = factories.make_payment_link(store)
    response = post(client, f"/v1/public/payment-links/{link.plpub_id}/checkout", key)
    assert (response.status_code, response.json["error"]["param"]) == (400, "Idempotency-Key")
    assert invoice_count() == 0


def test_a_replay_goes_only_to_the_key_that_was_answered(client, store, auth):
    """Kept per API key: another key of the store with the same Idempotency-Key makes its own
    request, judged by its own rights; it is never handed the first key's response."""
    integration = {"Authorization": f"Bearer {factories.make_key(store, kind='integration')}"}
    body = {"amount": "25.00", "currency": "USD"}
    first = post(client, "/v1/invoices", "shared-key-1", body, headers=auth)
    assert first.status_code == 201
    assert post(client, "/v1/invoices", "shared-key-1", body, headers=auth).headers["Idempotent-Replayed"] == "true"
    # The integration key may not create an invoice without external_order_id: it is told so.
    refused = post(client, "/v1/invoices", "shared-key-1", body, headers=integration)
    assert refused.status_code == 400 and "Idempotent-Replayed" not in refused.headers
    assert refused.json["code"] == "validation_error" and "external_order_id" in refused.json["error"]
    # A second standard key gets a request of its own, not the first key's invoice.
    second = {"Authorization": f"Bearer {factories.make_key(store)}"}
    own = post(client, "/v1/invoices", "shared-key-1", body, headers=second)
    assert own.status_code == 201 and "Idempotent-Replayed" not in own.headers
    assert own.json["id"] != first.json["id"]
    assert post(client, "/v1/invoices", "shared-key-1", body, headers=second).json["id"] == own.json["id"]
    assert invoice_count() == 2
