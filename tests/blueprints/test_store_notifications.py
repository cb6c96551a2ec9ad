"""`GET`/`PATCH /v1/store/notifications`: the store's notification mail settings, their refusals and scopes."""
import pytest

from models.mail import MERCHANT_KINDS
from tests import factories
from tests.blueprints.assertions import assert_error

PATH = "/v1/store/notifications"


def test_a_store_that_never_chose_has_no_recipients_and_every_kind_on(client, auth):
    body = client.get(PATH, headers=auth).json
    assert body == {"recipients": [], "kinds": {kind: True for kind in MERCHANT_KINDS}}


def test_patch_replaces_the_recipients_and_switches_the_kinds_it_names(client, auth):
    body = client.patch(PATH, json={"recipients": ["Ops@Shop.EXAMPLE", "owner@shop.example", "ops@shop.example"],
                                    "kinds": {"payment_received": False}}, headers=auth).json
    assert body["recipients"] == ["Ops@shop.example", "owner@shop.example", "ops@shop.example"]
    assert body["kinds"]["payment_received"] is False and body["kinds"]["refund_failed"] is True
    again = client.patch(PATH, json={"kinds": {"refund_failed": False}}, headers=auth).json
    assert again["recipients"] == body["recipients"]            # left out: kept
    assert (again["kinds"]["payment_received"], again["kinds"]["refund_failed"]) == (False, False)
    assert client.get(PATH, headers=auth).json == again
    assert client.patch(PATH, json={"recipients": []}, headers=auth).json["recipients"] == []


@pytest.mark.parametrize("body, param", [
    ({"recipients": ["not-an-address"]}, "recipients[0]"),
    ({"recipients": ["ok@shop.example", "two@@shop.example"]}, "recipients[1]"),
    ({"recipients": ["ok@shop.example\r\nBcc: all@example.com"]}, "recipients[0]"),
    ({"recipients": ["Name <ok@shop.example>"]}, "recipients[0]"),
    ({"recipients": [f"a{index}@shop.example" for index in range(6)]}, "recipients"),
    ({"recipients": "ok@shop.example"}, "recipients"),
    ({"recipients": [7]}, "recipients"),
    ({"kinds": {"payment_received": "yes"}}, "kinds"),
    ({"kinds": {"marketing": True}}, "kinds"),
    ({"kinds": []}, "kinds"),
    ({"colour": "red"}, "colour"),
])
def test_bad_input_is_a_400_naming_the_field(client, auth, body, param):
    error = assert_error(client.patch(PATH, json=body, headers=auth), 400, "validation_error")
    assert error["param"].startswith(param)
    assert client.get(PATH, headers=auth).json["recipients"] == []       # nothing changed


def test_scopes_and_integration_keys(client, store):
    limited = factories.make_key(store, scopes=["settings:read"])
    headers = {"Authorization": f"Bearer {limited}"}
    assert client.get(PATH, headers=headers).status_code == 200
    assert_error(client.patch(PATH, json={"recipients": []}, headers=headers), 403, "INSUFFICIENT_SCOPE")
    integration = factories.make_key(store, kind="integration")
    for method in ("get", "patch"):
        response = getattr(client, method)(PATH, json={}, headers={"Authorization": f"Bearer {integration}"})
        assert_error(response, 403, "INSUFFICIENT_SCOPE")


def test_each_store_sees_and_changes_only_its_own(client, auth, other_store):
    other = {"Authorization": f"Bearer {factories.make_key(other_store)}"}
    client.patch(PATH, json={"recipients": ["mine@shop.example"]}, headers=auth)
    assert client.get(PATH, headers=other).json["recipients"] == []
    client.patch(PATH, json={"recipients": ["theirs@other.example"]}, headers=other)
    assert client.get(PATH, headers=auth).json["recipients"] == ["mine@shop.example"]


@pytest.mark.parametrize("value", [0, 1, "true", None])
def test_a_kind_is_switched_by_json_true_or_false_only(client, auth, value):
    """0 equals False in Python, so a set-membership check let it through (found by the contract fuzzer)."""
    response = client.patch("/v1/store/notifications", json={"kinds": {"endpoint_disabled": value}}, headers=auth)
    assert_error(response, 400, "validation_error", param="kinds")
