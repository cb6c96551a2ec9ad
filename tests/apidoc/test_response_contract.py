"""The suite-wide response check (tests/support/contract.py): every test client validates each JSON
answer against /v1/openapi.json with openapi-core, so an answer the document does not describe fails
the test that received it. And the types a generated client relies on are the ones the server sends."""
import pytest

from models.integrations import CONNECTION_STATES
from models.invoices import STATUSES as INVOICE_STATUSES
from models.payment_links import AMOUNT_MODES, USAGES
from models.events import EVENT_TYPES
from models.transactions import TYPES as TRANSACTION_TYPES
from tests import factories
from tests.services.integrations.conftest import bearer, connect, route
from tests.support.contract import ContractClient, ContractMismatch, check_live, validator_for_document


def test_every_test_client_checks_its_answers(app):
    assert isinstance(app.test_client(), ContractClient)


def test_an_answer_the_document_does_not_describe_fails_the_test(client, monkeypatch):
    from infra import health

    real = health.check
    monkeypatch.setattr(health, "check", lambda extra=None: {**real(extra), "uptime": 12})   # a field the schema forbids
    with pytest.raises(ContractMismatch, match="uptime"):
        client.get("/health")


def test_a_live_answer_with_a_status_the_operation_does_not_list_fails(client):
    """check_live (the live-server tests' check): the same answer passes against the document, and
    fails once the document no longer lists its status."""
    answer = _requests_response(client.get("/health"), "http://127.0.0.1:8000/health")
    document = client.get("/v1/openapi.json").get_json()
    check_live(document, answer)
    del document["paths"]["/health"]["get"]["responses"]["200"]
    with pytest.raises(ContractMismatch, match="200"):
        check_live(document, answer)


def _requests_response(answer, url):
    import requests

    response = requests.Response()
    response.status_code = answer.status_code
    response._content = answer.get_data()
    response.headers.update(dict(answer.headers))
    response.request = requests.Request("GET", url).prepare()
    response.url = url
    return response


def test_the_validator_is_built_once_per_document(client):
    document = client.get("/v1/openapi.json").get_json()
    assert validator_for_document(document) is validator_for_document(dict(document))


def _schema(document, name):
    return document["components"]["schemas"][name]["properties"]


def test_closed_sets_are_enums_read_from_the_models(client):
    document = client.get("/v1/openapi.json").get_json()
    assert _schema(document, "Invoice")["status"]["enum"] == list(INVOICE_STATUSES)
    assert _schema(document, "InvoiceStatusPoll")["status"]["enum"] == list(INVOICE_STATUSES)
    assert _schema(document, "Transaction")["type"]["enum"] == list(TRANSACTION_TYPES)
    assert _schema(document, "PaymentLink")["amount_mode"]["enum"] == list(AMOUNT_MODES)
    assert _schema(document, "PaymentLink")["usage"]["enum"] == list(USAGES)
    assert _schema(document, "WebhookEndpoint")["events"]["items"]["enum"] == ["*", *EVENT_TYPES]
    assert _schema(document, "IntegrationStatus")["status"]["enum"] == list(CONNECTION_STATES)


def test_connect_without_a_payout_wallet_sends_the_documented_warning(client):
    store = factories.make_store(payout_wallet=None)
    body = connect(client, bearer(factories.make_key(store, kind="bootstrap")))
    assert body["payout_configured"] is False and "payout wallet" in body["warning"]
    document = client.get("/v1/openapi.json").get_json()
    schema = document["components"]["schemas"]["IntegrationConnection"]
    assert "warning" in schema["properties"] and "warning" not in schema["required"]


def test_status_of_a_store_never_connected_is_nulls_and_booleans(client, store):
    answer = client.get(route("status"), headers=bearer(factories.make_key(store, kind="bootstrap")))
    body = answer.get_json()
    assert answer.status_code == 200, body
    assert body["connected"] is False and body["payout_configured"] is True
    assert body["integration_id"] is None and body["connected_at"] is None


def test_a_settled_invoice_polls_with_its_negative_difference(client, auth, store):
    invoice = factories.make_invoice(store, status="paid", paid_amount="10.00", received_amount="9.87",
                                     difference_amount="-0.13")
    body = client.get(f"/v1/invoices/{invoice.public_id}/status", headers=auth).get_json()
    assert body["difference_amount"] == "-0.13"
