"""Merchant routes of payment links: create, read, list, update, activate/deactivate, and the
link's invoices and transactions (spec "Payment links (merchant)", docs/payment-links.md)."""
from decimal import Decimal
import re

import pytest

from models.base import db
from models.payment_links import PaymentLink
from tests import factories

HEX32 = re.compile(r"^[0-9a-f]{32}$")
LINK_FIELDS = ["id", "public_id", "public_url", "title", "amount_mode", "amount", "min_amount", "max_amount",
               "currency", "allow_multiple_payments", "public_visible", "usage", "status", "created_at",
               "updated_at"]
FIXED = {"title": "T-shirt", "amount_mode": "fixed_amount", "amount": "25.00"}
CUSTOM = {"title": "Tip jar", "amount_mode": "customer_defined_amount", "min_amount": "1", "max_amount": "100.5"}


def create(client, auth, body, **headers):
    return client.post("/v1/payment-links", json=body, headers={**auth, **headers})


def link_count():
    with db.connection_context():
        return PaymentLink.select().count()


def test_create_fixed_link_with_defaults(client, auth, store):
    response = create(client, auth, FIXED)
    assert response.status_code == 201, response.json
    link = response.json
    assert list(link) == LINK_FIELDS
    assert link["id"].startswith("plink_") and HEX32.match(link["id"][6:])
    assert link["public_id"].startswith("plpub_") and HEX32.match(link["public_id"][6:])
    assert link["public_url"] == f"http://tender.test/pay/{link['public_id']}"
    assert (link["amount"], link["min_amount"], link["max_amount"]) == ("25.00", None, None)
    assert (link["currency"], link["allow_multiple_payments"], link["public_visible"]) == ("USD", True, True)
    assert (link["usage"], link["status"]) == ("reusable", "active")
    assert link["created_at"].endswith("Z")
    with db.connection_context():
        row = PaymentLink.get(PaymentLink.public_id == link["id"])
    assert row.store_id == store.id and row.amount == Decimal("25.00")


def test_create_customer_defined_single_use_link(client, auth):
    response = create(client, auth, {**CUSTOM, "allow_multiple_payments": False, "public_visible": False,
                                      "currency": "EUR"})
    assert response.status_code == 201, response.json
    link = response.json
    assert (link["amount"], link["min_amount"], link["max_amount"]) == (None, "1.00", "100.50")
    assert (link["usage"], link["allow_multiple_payments"], link["public_visible"]) == ("single_use", False, False)
    assert link["currency"] == "EUR"


@pytest.mark.parametrize("body", [
    {"title": "Open", "amount_mode": "customer_defined_amount"},
    {"title": "Floor", "amount_mode": "customer_defined_amount", "min_amount": "5.00"},
    {"title": "Same", "amount_mode": "customer_defined_amount", "min_amount": "5", "max_amount": "5"},
    {"title": "Nulls", "amount_mode": "fixed_amount", "amount": "1.00", "min_amount": None, "max_amount": None},
])
def test_create_accepts_every_valid_shape(client, auth, body):
    assert create(client, auth, body).status_code == 201


@pytest.mark.parametrize("body, param", [
    ({**FIXED, "amount_mode": "pay_what_you_want"}, "amount_mode"),
    ({**FIXED, "amount_mode": None}, "amount_mode"),
    ({"title": "No mode", "amount": "1.00"}, "amount_mode"),
    ({"amount_mode": "fixed_amount", "amount": "1.00"}, "title"),
    ({**FIXED, "title": ""}, "title"),
    ({**FIXED, "title": "   "}, "title"),
    ({**FIXED, "title": "x" * 201}, "title"),
    ({**FIXED, "title": "line\nbreak"}, "title"),
    ({**FIXED, "title": 7}, "title"),
    ({**FIXED, "amount": 25}, "amount"),
    ({**FIXED, "amount": 25.5}, "amount"),
    ({**FIXED, "amount": "0"}, "amount"),
    ({**FIXED, "amount": "-1.00"}, "amount"),
    ({**FIXED, "amount": "1.005"}, "amount"),
    ({**FIXED, "amount": "1e3"}, "amount"),
    ({**FIXED, "amount": "ten"}, "amount"),
    ({"title": "Fixed", "amount_mode": "fixed_amount"}, "amount"),
    ({**FIXED, "min_amount": "1.00"}, "min_amount"),
    ({**FIXED, "max_amount": "1.00"}, "max_amount"),
    ({**CUSTOM, "amount": "5.00"}, "amount"),
    ({**CUSTOM, "min_amount": "100.51"}, "max_amount"),
    ({**CUSTOM, "min_amount": 1}, "min_amount"),
    ({**CUSTOM, "max_amount": 100}, "max_amount"),
    ({**FIXED, "colour": "red"}, "colour"),
    ({**FIXED, "allow_multiple_payments": "yes"}, "allow_multiple_payments"),
    ({**FIXED, "allow_multiple_payments": 1}, "allow_multiple_payments"),
    ({**FIXED, "public_visible": None}, "public_visible"),
    ({**FIXED, "currency": "usd"}, "currency"),
    ({**FIXED, "currency": "GBP"}, "currency"),
    ({**FIXED, "status": "inactive"}, "status"),
    ({**FIXED, "id": "plink_" + "0" * 32}, "id"),
])
def test_create_refuses_bad_bodies_naming_the_field(client, auth, body, param):
    response = create(client, auth, body)
    assert response.status_code == 400, response.json
    error = response.json["error"]
    assert (error["type"], error["code"], error["param"]) == ("invalid_request", "validation_error", param)
    assert link_count() == 0


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b"\"text\"", b"{\"amount\": NaN}"])
def test_create_refuses_non_object_json(client, auth, raw):
    response = client.post("/v1/payment-links", data=raw, headers={**auth, "Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.json["error"]["code"] == "invalid_json"


def test_scopes_and_authentication(client, store):
    reader = {"Authorization": f"Bearer {factories.make_key(store, scopes=['payment_links:read'])}"}
    writer = {"Authorization": f"Bearer {factories.make_key(store, scopes=['payment_links:write'])}"}
    invoices_only = {"Authorization": f"Bearer {factories.make_key(store, scopes=['invoices:read'])}"}
    assert create(client, reader, FIXED).json["error"]["code"] == "INSUFFICIENT_SCOPE"
    created = create(client, writer, FIXED)
    assert created.status_code == 201
    link_id = created.json["id"]
    for method, path in [("get", ""), ("get", f"/{link_id}"), ("get", f"/{link_id}/invoices"),
                         ("get", f"/{link_id}/transactions")]:
        assert getattr(client, method)(f"/v1/payment-links{path}", headers=writer).status_code == 403
        assert getattr(client, method)(f"/v1/payment-links{path}", headers=invoices_only).status_code == 403
        assert getattr(client, method)(f"/v1/payment-links{path}", headers=reader).status_code == 200
    for method, path, body in [("patch", f"/{link_id}", {"title": "x"}), ("post", f"/{link_id}/activate", None),
                               ("post", f"/{link_id}/deactivate", None)]:
        response = getattr(client, method)(f"/v1/payment-links{path}", json=body, headers=reader)
        assert (response.status_code, response.json["error"]["code"]) == (403, "INSUFFICIENT_SCOPE")
    assert client.get("/v1/payment-links").status_code == 401
    assert client.post("/v1/payment-links", json=FIXED,
                       headers={"Authorization": "Bearer sk_live_nope"}).json["error"]["code"] == "invalid_api_key"


def test_get_link_and_not_found_cases(client, auth, other_auth):
    link = create(client, auth, FIXED).json
    assert client.get(f"/v1/payment-links/{link['id']}", headers=auth).json == link
    other = create(client, other_auth, FIXED).json
    for bad in [other["id"], "plink_" + "0" * 32, "plink_XYZ", "plink_" + "a" * 33, link["public_id"],
                "inv_" + link["id"][6:], "nonsense", "plink_" + "a" * 19]:
        for method, suffix in [("get", ""), ("patch", ""), ("post", "/activate"), ("post", "/deactivate"),
                               ("get", "/invoices"), ("get", "/transactions")]:
            response = getattr(client, method)(f"/v1/payment-links/{bad}{suffix}", json={}, headers=auth)
            assert response.status_code == 404, (bad, suffix)
            assert response.json["error"]["code"] == "payment_link_not_found"


def test_list_pages_newest_first_within_the_store(client, auth, other_auth, store):
    import datetime as dt

    base = dt.datetime(2026, 1, 1, 12, 0, 0)
    made = [factories.make_payment_link(store, title=f"L{i}", now=base + dt.timedelta(minutes=i)) for i in range(5)]
    create(client, other_auth, FIXED)
    ids = [link.public_id for link in reversed(made)]
    first = client.get("/v1/payment-links?limit=2", headers=auth).json
    assert [item["id"] for item in first["data"]] == ids[:2]
    assert (first["has_more"], first["next_cursor"]) == (True, ids[1])
    second = client.get(f"/v1/payment-links?limit=2&starting_after={ids[1]}", headers=auth).json
    assert [item["id"] for item in second["data"]] == ids[2:4]
    last = client.get(f"/v1/payment-links?limit=2&starting_after={ids[3]}", headers=auth).json
    assert ([item["id"] for item in last["data"]], last["has_more"], last["next_cursor"]) == ([ids[4]], False, None)
    back = client.get(f"/v1/payment-links?limit=2&ending_before={ids[2]}", headers=auth).json
    assert [item["id"] for item in back["data"]] == ids[:2]
    everything = client.get("/v1/payment-links?limit=100", headers=auth).json
    assert [item["id"] for item in everything["data"]] == ids


def test_list_filters_and_bad_queries(client, auth, other_auth, store):
    active = factories.make_payment_link(store)
    with db.connection_context():
        inactive = factories.make_payment_link(store)
        PaymentLink.update(status="inactive").where(PaymentLink.id == inactive.id).execute()
    assert [i["id"] for i in client.get("/v1/payment-links?status=inactive", headers=auth).json["data"]] == [
        inactive.public_id]
    assert [i["id"] for i in client.get("/v1/payment-links?status=active", headers=auth).json["data"]] == [
        active.public_id]
    foreign = create(client, other_auth, FIXED).json["id"]
    for query, code, param in [("limit=0", "validation_error", "limit"), ("limit=101", "validation_error", "limit"),
                               ("limit=ten", "validation_error", "limit"), ("status=paid", "validation_error", "status"),
                               (f"starting_after={foreign}", "invalid_cursor", "starting_after"),
                               ("starting_after=inv_" + "0" * 32, "invalid_cursor", "starting_after"),
                               (f"starting_after={active.public_id}&ending_before={active.public_id}",
                                "validation_error", "ending_before"),
                               ("colour=red", "validation_error", "colour")]:
        response = client.get(f"/v1/payment-links?{query}", headers=auth)
        assert response.status_code == 400, query
        assert (response.json["error"]["code"], response.json["error"]["param"]) == (code, param), query
