"""A Python client generated from /v1/openapi.json by openapi-python-client (the most used Python
generator), warnings as failures, drives invoices and events against a real gunicorn: a document that
the generator reads differently from the API (a schema dropped, a response left unparsed) fails here.
The TypeScript client has the same test (tests/ops/test_stack.py)."""
import importlib
import subprocess
import sys

import pytest
import requests

from tests import factories
from tests.support.processes import BIN, gunicorn_on


@pytest.fixture(scope="module")
def live_web(app, test_env, tmp_path_factory):
    with gunicorn_on(test_env, tmp_path_factory.mktemp("web") / "web.log", WEB_THREADS="2") as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def tender_client(live_web, tmp_path_factory):
    """The generated package, imported (as `tender_client`) from a directory of its own."""
    build = tmp_path_factory.mktemp("python-client")
    (build / "openapi.json").write_bytes(requests.get(live_web + "/v1/openapi.json", timeout=10).content)
    (build / "generator.yaml").write_text("post_hooks: []\n")       # no formatting pass: nothing to check there
    generated = subprocess.run([str(BIN / "openapi-python-client"), "generate", "--path", "openapi.json",
                                "--fail-on-warning", "--meta", "none", "--config", "generator.yaml",
                                "--output-path", "tender_client"],
                               cwd=build, capture_output=True, text=True, timeout=120)
    assert generated.returncode == 0 and "Warning" not in generated.stdout + generated.stderr, \
        generated.stdout + generated.stderr
    sys.path.insert(0, str(build))
    try:
        yield importlib.import_module("tender_client")
    finally:
        sys.path.remove(str(build))
        for name in [name for name in sys.modules if name.split(".")[0] == "tender_client"]:
            del sys.modules[name]


def test_the_generated_client_creates_reads_lists_and_cancels_invoices(tender_client, live_web, store):
    from tender_client.api.invoices import cancel_invoice, create_invoice, get_invoice, list_invoices
    from tender_client.models import Invoice, InvoiceCreate, InvoicePage

    client = tender_client.AuthenticatedClient(base_url=live_web, token=factories.make_key(store))
    created = create_invoice.sync(client=client, body=InvoiceCreate(amount="12.50", currency="USD"))
    assert created.amount == "12.50", created

    fetched = get_invoice.sync(created.id, client=client)
    assert isinstance(fetched, Invoice) and (fetched.id, fetched.status.value) == (created.id, "pending")

    page = list_invoices.sync(client=client, limit=5)
    assert isinstance(page, InvoicePage) and [invoice.id for invoice in page.data] == [created.id]

    cancelled = cancel_invoice.sync(created.id, client=client, idempotency_key="cancel-once")
    assert isinstance(cancelled, Invoice) and cancelled.status.value == "cancelled"


def test_the_generated_client_lists_and_reads_events(tender_client, live_web, store):
    from tender_client.api.events import get_event, list_events
    from tender_client.api.invoices import create_invoice
    from tender_client.models import Event, EventPage, Invoice, InvoiceCreate

    client = tender_client.AuthenticatedClient(base_url=live_web, token=factories.make_key(store))
    created = create_invoice.sync(client=client, body=InvoiceCreate(amount="3.00", currency="USD"))

    page = list_events.sync(client=client)
    assert isinstance(page, EventPage) and [event.type_.value for event in page.data] == ["invoice.created"]
    event = get_event.sync(page.data[0].id, client=client)
    assert isinstance(event, Event) and isinstance(event.data.object_, Invoice)
    assert event.data.object_.id == created.id
