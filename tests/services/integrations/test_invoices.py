"""Invoices of a dedicated key: linked to the installation, one open or paid invoice per order."""
from concurrent.futures import ThreadPoolExecutor

import pytest

from core.clock import utcnow
from models.base import db, is_postgres
from models.integrations import Integration
from models.invoices import Invoice
from services.engine import invoice_states
from tests import factories
from tests.blueprints.assertions import assert_error, assert_legacy_error
from tests.services.integrations.conftest import bearer, connect


@pytest.fixture
def dedicated(client, bootstrap_auth):
    return bearer(connect(client, bootstrap_auth)["api_key"])


def create(client, auth, order="wc-1001", expect=201, **over):
    response = client.post("/v1/invoices", json={"amount": "12.50", "external_order_id": order, **over}, headers=auth)
    assert response.status_code == expect, response.get_json()
    return response.get_json()


def row(public_id):
    with db.connection_context():
        return Invoice.get(Invoice.public_id == public_id)


def test_an_invoice_of_a_dedicated_key_is_linked_to_the_installation(client, auth, dedicated):
    invoice = create(client, dedicated)
    with db.connection_context():
        assert row(invoice["id"]).integration_id == Integration.get().id
    # A standard key's invoice is not linked, and the order rule does not apply to it.
    plain = create(client, auth)
    assert row(plain["id"]).integration_id is None
    assert create(client, auth)["id"] != plain["id"]
    # The dedicated key reads its invoices back (invoices:read).
    assert client.get(f"/v1/invoices/{invoice['id']}", headers=dedicated).get_json()["external_order_id"] == "wc-1001"


def test_a_second_invoice_for_an_open_order_is_a_conflict(client, dedicated):
    first = create(client, dedicated)
    error = assert_legacy_error(client.post("/v1/invoices", json={"amount": "12.50", "external_order_id": "wc-1001"},
                                            headers=dedicated), 409, "EXTERNAL_ORDER_INTEGRATION_CONFLICT")
    assert error["details"]["invoice_id"] == first["id"] and error["details"]["status"] == "pending"
    assert create(client, dedicated, order="wc-1002")["id"] != first["id"]     # another order is fine


@pytest.mark.parametrize("final, blocks", [("paid", True), ("expired", False), ("cancelled", False),
                                           ("failed", False), ("awaiting_payment", True)])
def test_which_states_block_a_new_invoice_for_the_order(client, dedicated, final, blocks):
    first = create(client, dedicated)
    with db.connection_context():
        Invoice.update(status=final).where(Invoice.public_id == first["id"]).execute()
    response = client.post("/v1/invoices", json={"amount": "12.50", "external_order_id": "wc-1001"}, headers=dedicated)
    if blocks:
        assert_legacy_error(response, 409, "EXTERNAL_ORDER_INTEGRATION_CONFLICT")
    else:
        assert response.status_code == 201, response.get_json()


def test_an_expired_invoice_paid_late_beside_its_successor_still_moves(client, dedicated):
    """Why the rule is a lock and not a unique index: a late payment must not be refused."""
    first = create(client, dedicated)
    now = utcnow()
    with db.connection_context():
        Invoice.update(status="expired").where(Invoice.public_id == first["id"]).execute()
    create(client, dedicated)
    with db.connection_context():
        moved = invoice_states.move(row(first["id"]).id, "deposit_confirmed", now=now, paid_at=now)
    assert moved is not None and moved.status == "paid"


def test_integration_key_rules(client, dedicated):
    assert_legacy_error(client.post("/v1/invoices", json={"amount": "1.00"}, headers=dedicated), 400,
                        "validation_error", param="external_order_id")
    assert_legacy_error(client.post("/v1/invoices", json={"amount": "1.00", "external_order_id": "x",
                                                          "callback_url": "https://shop.example.com/cb"},
                                    headers=dedicated), 403, "integration_key_forbidden")
    invoice = create(client, dedicated)
    assert_error(client.post(f"/v1/invoices/{invoice['id']}/cancel", headers=dedicated), 403,
                 "integration_key_forbidden")


def test_payout_wallet_missing_is_the_legacy_400(client):
    store = factories.make_store(payout_wallet=None)
    key = bearer(connect(client, bearer(factories.make_key(store, kind="bootstrap")))["api_key"])
    assert_legacy_error(client.post("/v1/invoices", json={"amount": "1.00", "external_order_id": "x"}, headers=key),
                        400, "payout_wallet_not_configured")


def test_a_create_waits_for_a_create_in_flight_for_the_same_order(client, dedicated, settings):
    """Race-safety on PostgreSQL, made deterministic: another transaction holds the installation's
    lock with an uncommitted invoice for the order; our create must wait for it, then see it (409)."""
    if not is_postgres():
        pytest.skip("row locks are PostgreSQL's; SQLite serialises every writer anyway")
    import time

    import psycopg2

    seed = create(client, dedicated, order="wc-seed")
    with db.connection_context():
        integration_id = str(Integration.get().id)
    other = psycopg2.connect(settings.database_url.replace("postgres://", "postgresql://"))
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT id FROM integration WHERE id = %s FOR UPDATE", (integration_id,))
            cursor.execute("CREATE TEMP TABLE in_flight AS SELECT * FROM invoice WHERE public_id = %s", (seed["id"],))
            cursor.execute("UPDATE in_flight SET id = gen_random_uuid(), public_id = 'inv_' || md5(random()::text), "
                           "external_order_id = 'wc-race'")
            cursor.execute("INSERT INTO invoice SELECT * FROM in_flight RETURNING public_id")
            in_flight_id = cursor.fetchone()[0]
        with ThreadPoolExecutor(1) as pool:
            result = pool.submit(lambda: client.post("/v1/invoices", json={"amount": "12.50",
                                                                             "external_order_id": "wc-race"},
                                                      headers=dedicated))
            deadline, waiting = time.monotonic() + 10, False
            with other.cursor() as probe:
                while not waiting and not result.done() and time.monotonic() < deadline:
                    probe.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                  "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()")
                    waiting = probe.fetchone()[0] > 0
            assert waiting, "the create did not wait for the in-flight create's lock"
            other.commit()
            response = result.result(timeout=10)
    finally:
        other.close()
    error = assert_legacy_error(response, 409, "EXTERNAL_ORDER_INTEGRATION_CONFLICT")
    assert error["details"]["invoice_id"] == in_flight_id
