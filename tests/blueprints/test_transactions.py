"""Transaction routes: the list and its filters, get, by-hash within the store, invoice transactions."""
import datetime as dt
from decimal import Decimal
import uuid

from playhouse.test_utils import count_queries
import pytest

from core.clock import utcnow
from tests import factories
from tests.blueprints.assertions import (TIMESTAMP, TRANSACTION_FIELDS, assert_error, assert_no_query_per_row,
                                         ids, list_page)


def make_txn(invoice, minutes_ago=0, **over):
    return factories.make_transaction(invoice, now=utcnow() - dt.timedelta(minutes=minutes_ago), **over)


def list_transactions(client, auth, **query):
    return list_page(client, auth, "/v1/transactions", **query)


def test_transaction_has_every_documented_field(client, auth, store):
    invoice = factories.make_invoice(store)
    txn = make_txn(invoice, amount=Decimal("0.000120"), network=None, confirmations=None,
                   status="pending", verified=False, confirmed_at=None)
    body = client.get(f"/v1/transactions/{txn.public_id}", headers=auth).get_json()
    assert set(body) == TRANSACTION_FIELDS
    assert body["id"] == txn.public_id
    assert body["invoice_id"] == invoice.public_id
    assert body["amount"] == "0.00012"               # crypto amounts: exact, no exponent
    assert (body["network"], body["confirmations"], body["confirmed_at"]) == (None, None, None)
    assert (body["status"], body["verified"]) == ("pending", False)
    assert TIMESTAMP.match(body["created_at"]) and TIMESTAMP.match(body["updated_at"])
    assert str(txn.id) not in str(body) and str(invoice.id) not in str(body)


def test_list_is_newest_first_and_only_the_keys_store(client, auth, store, other_store):
    invoice = factories.make_invoice(store)
    older, newer = make_txn(invoice, 5), make_txn(invoice, 1)
    make_txn(factories.make_invoice(other_store))
    page = list_transactions(client, auth)
    assert set(page) == {"data", "has_more", "next_cursor"}
    assert ids(page) == [newer.public_id, older.public_id]
    assert page["data"][0]["invoice_id"] == invoice.public_id
    assert (page["has_more"], page["next_cursor"]) == (False, None)


def test_list_pages_with_starting_after(client, auth, store):
    invoice = factories.make_invoice(store)
    c, b, a = make_txn(invoice, 1), make_txn(invoice, 2), make_txn(invoice, 3)
    first = list_transactions(client, auth, limit=2)
    assert (ids(first), first["has_more"], first["next_cursor"]) == ([c.public_id, b.public_id], True, b.public_id)
    rest = list_transactions(client, auth, limit=2, starting_after=b.public_id)
    assert (ids(rest), rest["has_more"], rest["next_cursor"]) == ([a.public_id], False, None)


def test_filters(client, auth, store):
    customer, link = uuid.uuid4(), "plink_" + "c" * 32
    linked = factories.make_invoice(store, customer_id=customer, payment_link_id=link)
    plain = factories.make_invoice(store)
    payment = make_txn(linked, 3, type="payment_origin", status="confirmed")
    settlement = make_txn(linked, 2, type="settlement", status="pending")
    refund = make_txn(plain, 1, type="refund", status="failed")
    assert ids(list_transactions(client, auth, invoice_id=linked.public_id)) == [settlement.public_id,
                                                                                 payment.public_id]
    assert ids(list_transactions(client, auth, payment_link_id=link)) == [settlement.public_id, payment.public_id]
    assert ids(list_transactions(client, auth, customer_id=str(customer))) == [settlement.public_id,
                                                                               payment.public_id]
    assert ids(list_transactions(client, auth, type="refund")) == [refund.public_id]
    assert ids(list_transactions(client, auth, status="pending")) == [settlement.public_id]
    assert ids(list_transactions(client, auth, type="payment_origin", status="confirmed",
                                 invoice_id=linked.public_id)) == [payment.public_id]
    assert ids(list_transactions(client, auth, invoice_id="inv_" + "0" * 32)) == []


def test_invoice_id_filter_does_not_reach_another_store(client, auth, other_store):
    theirs = factories.make_invoice(other_store)
    make_txn(theirs)
    assert list_transactions(client, auth, invoice_id=theirs.public_id)["data"] == []


@pytest.mark.parametrize("param, value", [
    ("invoice_id", "txn_" + "a" * 32), ("invoice_id", "not-an-id"),
    ("payment_link_id", "inv_" + "a" * 32), ("customer_id", "nope"),
    ("type", "payout"), ("type", ""), ("status", "done"), ("status", "CONFIRMED"),
    ("limit", "0"), ("limit", "101"), ("limit", "x"),
    ("payments", "1"),                                   # unknown parameter
])
def test_bad_query_values_are_refused_naming_the_parameter(client, auth, param, value):
    response = client.get("/v1/transactions", headers=auth, query_string={param: value})
    assert_error(response, 400, "validation_error", param=param)


@pytest.mark.parametrize("cursor_kind", ["unknown", "other_store", "invoice_id"])
def test_bad_cursor_is_invalid_cursor(client, auth, store, other_store, cursor_kind):
    mine = factories.make_invoice(store)
    make_txn(mine)
    cursor = {"unknown": "txn_" + "e" * 32, "other_store": make_txn(factories.make_invoice(other_store)).public_id,
              "invoice_id": mine.public_id}[cursor_kind]
    response = client.get("/v1/transactions", headers=auth, query_string={"starting_after": cursor})
    assert_error(response, 400, "invalid_cursor", param="starting_after")


@pytest.mark.parametrize("bad_id", ["inv_" + "a" * 32, "txn_" + "A" * 32, "txn_short", "txn_" + "0" * 32, "x"])
def test_get_with_a_malformed_or_unknown_id_is_not_found(client, auth, store, bad_id):
    make_txn(factories.make_invoice(store))
    assert_error(client.get(f"/v1/transactions/{bad_id}", headers=auth), 404, "transaction_not_found")


def test_get_another_stores_transaction_is_not_found(client, auth, other_store):
    theirs = make_txn(factories.make_invoice(other_store))
    assert_error(client.get(f"/v1/transactions/{theirs.public_id}", headers=auth), 404, "transaction_not_found")


def test_by_hash_finds_the_stores_transaction(client, auth, store):
    txn = make_txn(factories.make_invoice(store), transaction_hash="0x" + "ab" * 32)
    response = client.get(f"/v1/transactions/by-hash/{txn.transaction_hash}", headers=auth)
    assert response.status_code == 200
    assert response.get_json() == client.get(f"/v1/transactions/{txn.public_id}", headers=auth).get_json()


def test_by_hash_stays_within_the_stores_scope(client, auth, store, other_store):
    shared_hash = "0x" + "cd" * 32
    theirs_only = "0x" + "ef" * 32
    mine = make_txn(factories.make_invoice(store), transaction_hash=shared_hash)
    make_txn(factories.make_invoice(other_store), transaction_hash=shared_hash)
    make_txn(factories.make_invoice(other_store), transaction_hash=theirs_only)
    assert client.get(f"/v1/transactions/by-hash/{shared_hash}", headers=auth).get_json()["id"] == mine.public_id
    assert_error(client.get(f"/v1/transactions/by-hash/{theirs_only}", headers=auth), 404, "transaction_not_found")


@pytest.mark.parametrize("bad_hash", ["0xunknown", "0X" + "ab" * 32, "a" * 300, "%20"])
def test_by_hash_with_an_unknown_hash_is_not_found(client, auth, store, bad_hash):
    make_txn(factories.make_invoice(store), transaction_hash="0x" + "ab" * 32)
    response = client.get(f"/v1/transactions/by-hash/{bad_hash}", headers=auth)
    assert_error(response, 404, "transaction_not_found")


def test_invoice_transactions_oldest_first_in_a_data_object(client, auth, store):
    invoice = factories.make_invoice(store)
    settlement = make_txn(invoice, 1, type="settlement")
    payment = make_txn(invoice, 5, type="payment_origin")
    make_txn(factories.make_invoice(store))          # another invoice's
    body = client.get(f"/v1/invoices/{invoice.public_id}/transactions", headers=auth).get_json()
    assert set(body) == {"data"}
    assert [item["id"] for item in body["data"]] == [payment.public_id, settlement.public_id]
    assert all(set(item) == TRANSACTION_FIELDS for item in body["data"])


def test_invoice_without_transactions_has_an_empty_list(client, auth, store):
    invoice = factories.make_invoice(store)
    assert client.get(f"/v1/invoices/{invoice.public_id}/transactions", headers=auth).get_json() == {"data": []}


def test_transaction_routes_need_transactions_read(client, store):
    invoice = factories.make_invoice(store)
    txn = make_txn(invoice)
    auth = {"Authorization": f"Bearer {factories.make_key(store, scopes=['invoices:read'])}"}
    for path in ("/v1/transactions", f"/v1/transactions/{txn.public_id}",
                 f"/v1/transactions/by-hash/{txn.transaction_hash}", f"/v1/invoices/{invoice.public_id}/transactions"):
        assert_error(client.get(path, headers=auth), 403, "INSUFFICIENT_SCOPE")


def test_no_query_per_row(client, auth, store):
    for _ in range(50):
        make_txn(factories.make_invoice(store))
    assert_no_query_per_row(client, auth, "/v1/transactions", rows=50)


def test_invoice_transactions_take_no_query_per_row(client, auth, store):
    one, many = factories.make_invoice(store), factories.make_invoice(store)
    make_txn(one)
    for minutes in range(20):
        make_txn(many, minutes)

    def queries_for(invoice):
        with count_queries() as counter:
            client.get(f"/v1/invoices/{invoice.public_id}/transactions", headers=auth)
        return counter.count

    queries_for(one)                    # the key lookup is cached for a second from here on
    assert queries_for(one) == queries_for(many)
