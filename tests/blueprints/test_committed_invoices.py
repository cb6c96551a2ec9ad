"""A committed invoice keeps its asset and refund address, and is never handed to another caller.

The `plpub_` token and a checkout URL are public: a stranger who knows them must not be able to
change where a buyer's refunds go, nor be answered with a deposit address whose refunds go to
somebody else. On the real stack: the sandbox provider (database-backed), our routes and database.
"""
import dataclasses
import threading

import pytest

from models.base import db, is_postgres
from models.invoices import Invoice
from tests import factories

BUYER = {"origin_asset": "usdc.eth", "refund_to": "0x" + "b" * 40}
STRANGER = {"origin_asset": "usdc.eth", "refund_to": "0x" + "5" * 40}


def checkout(client, link, body):
    return client.post(f"/v1/public/payment-links/{link.plpub_id}/checkout", json=body)


def commit(client, invoice_id, buyer):
    return client.post(f"/v1/public/invoices/{invoice_id}/quote", json={**buyer, "dry": False})


def refund_address_of(invoice_id):
    with db.connection_context():
        return Invoice.get(Invoice.public_id == invoice_id).refund_to


def assert_already_committed(response):
    assert response.status_code == 409, response.json
    assert (response.json["error"]["type"], response.json["error"]["code"]) == ("conflict", "invoice_already_committed")
    assert "already being paid" in response.json["error"]["message"]
    assert "invoice_id" not in response.json and "deposit_address" not in str(response.json)


def test_a_stranger_cannot_take_a_single_use_links_committed_invoice(client, store):
    link = factories.make_payment_link(store, allow_multiple_payments=False)
    first = checkout(client, link, BUYER)
    assert first.status_code == 201 and first.json["reused"] is False
    assert_already_committed(checkout(client, link, STRANGER))
    assert_already_committed(checkout(client, link, {"origin_asset": "usdc.base", "refund_to": BUYER["refund_to"]}))
    assert_already_committed(checkout(client, link, {}))      # no details: not shown someone else's address
    again = checkout(client, link, BUYER)                      # the buyer's double click
    assert again.status_code == 201 and again.json == {**first.json, "reused": True}
    assert refund_address_of(first.json["invoice_id"]) == BUYER["refund_to"]


def test_a_quote_commit_with_other_details_is_refused_and_the_same_one_repeats(client, store):
    invoice = factories.make_invoice(store)
    first = commit(client, invoice.public_id, BUYER)
    assert first.status_code == 200
    assert first.json["invoice"]["refund_to"] == BUYER["refund_to"][:6] + "…" + BUYER["refund_to"][-4:]
    assert_already_committed(commit(client, invoice.public_id, STRANGER))
    assert_already_committed(commit(client, invoice.public_id, {**BUYER, "origin_asset": "usdc.base"}))
    again = commit(client, invoice.public_id, BUYER)
    assert again.status_code == 200 and again.json["quote"] is None
    assert again.json["invoice"]["deposit_address"] == first.json["invoice"]["deposit_address"]
    assert refund_address_of(invoice.public_id) == BUYER["refund_to"]


def test_a_single_use_link_is_free_again_once_the_strangers_invoice_ends(client, store, auth):
    link = factories.make_payment_link(store, allow_multiple_payments=False)
    taken = checkout(client, link, STRANGER).json["invoice_id"]
    assert_already_committed(checkout(client, link, BUYER))
    assert client.post(f"/v1/invoices/{taken}/cancel", headers=auth).status_code == 200
    mine = checkout(client, link, BUYER)
    assert mine.status_code == 201 and mine.json["reused"] is False and mine.json["invoice_id"] != taken
    assert refund_address_of(mine.json["invoice_id"]) == BUYER["refund_to"]


CONCURRENCY = 6


def test_concurrent_commits_with_different_addresses_have_one_winner(app, settings, store, monkeypatch):
    if not is_postgres():
        pytest.skip("needs real concurrent connections: set TEST_DATABASE_URL to PostgreSQL")
    monkeypatch.setitem(app.extensions, "tender.settings", dataclasses.replace(settings, rate_limit_public_mode="off"))
    invoice = factories.make_invoice(store)
    buyers = [{"origin_asset": "usdc.eth", "refund_to": "0x" + f"{i + 1}" * 40} for i in range(CONCURRENCY)]
    barrier, responses = threading.Barrier(CONCURRENCY), [None] * CONCURRENCY

    def buyer(index):
        client = app.test_client()
        barrier.wait(timeout=30)
        responses[index] = commit(client, invoice.public_id, buyers[index])

    threads = [threading.Thread(target=buyer, args=(i,)) for i in range(CONCURRENCY)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    statuses = sorted(response.status_code for response in responses)
    assert statuses == [200] + [409] * (CONCURRENCY - 1), [r.json for r in responses]
    [winner] = [index for index, response in enumerate(responses) if response.status_code == 200]
    won = buyers[winner]["refund_to"]
    assert responses[winner].json["invoice"]["refund_to"] == won[:6] + "…" + won[-4:]      # the view shortens it
    assert refund_address_of(invoice.public_id) == buyers[winner]["refund_to"]
    for response in responses:
        if response.status_code == 409:
            assert_already_committed(response)
