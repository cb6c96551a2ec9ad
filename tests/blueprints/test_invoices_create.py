"""POST /v1/invoices: the create response, currency, store, payout wallet, amounts and strings."""
import datetime as dt
from decimal import Decimal
import re
import uuid

import pytest

from models.invoices import Invoice
from tests import factories
from tests.blueprints.assertions import TIMESTAMP, assert_legacy_error

CREATE_FIELDS = {"id", "status", "checkout_url", "payment_url", "amount", "currency", "output_asset", "expires_at"}


def create(client, auth, **body):
    return client.post("/v1/invoices", headers=auth, json={"amount": "10.00", **body})


def invoice_count():
    return Invoice.select().count()


def test_create_returns_exactly_the_documented_fields(client, auth):
    response = create(client, auth, amount="25.50")
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == CREATE_FIELDS
    assert re.fullmatch(r"inv_[0-9a-f]{32}", body["id"])
    assert body["status"] == "pending"
    assert body["amount"] == "25.50"
    assert body["currency"] == "USD"
    assert body["output_asset"] == "usdc.near"
    assert TIMESTAMP.match(body["expires_at"])


def test_payment_url_equals_checkout_url_on_the_public_base(client, auth):
    body = create(client, auth).get_json()
    assert body["checkout_url"] == f"http://tender.test/checkout/{body['id']}"
    assert body["payment_url"] == body["checkout_url"]


def test_expires_at_is_creation_plus_the_configured_ttl(client, auth, settings):
    body = create(client, auth).get_json()
    row = Invoice.get(Invoice.public_id == body["id"])
    assert row.expires_at - row.created_at == dt.timedelta(seconds=settings.invoice_ttl_seconds)
    assert body["expires_at"] == row.expires_at.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_the_internal_uuid_never_appears(client, auth):
    response = create(client, auth)
    row = Invoice.get(Invoice.public_id == response.get_json()["id"])
    text = response.get_data(as_text=True)
    assert str(row.id) not in text and row.id.hex not in text


def test_currency_defaults_to_usd_and_order_fields_default_to_amount(client, auth):
    invoice_id = create(client, auth, amount="7").get_json()["id"]
    invoice = client.get(f"/v1/invoices/{invoice_id}", headers=auth).get_json()
    assert (invoice["amount"], invoice["currency"]) == ("7.00", "USD")
    assert (invoice["order_amount"], invoice["order_currency"]) == ("7.00", "USD")


def test_a_supported_currency_and_any_order_currency_are_kept(client, auth):
    response = create(client, auth, currency="EUR", order_amount="12.5", order_currency="GBP")
    assert response.status_code == 201
    assert response.get_json()["currency"] == "EUR"
    invoice = client.get(f"/v1/invoices/{response.get_json()['id']}", headers=auth).get_json()
    assert (invoice["order_amount"], invoice["order_currency"]) == ("12.50", "GBP")


@pytest.mark.parametrize("currency", ["GBP", "usd", "US", "USDT", "", 840, None])
def test_unsupported_or_malformed_currency_is_refused(client, auth, currency):
    assert_legacy_error(create(client, auth, currency=currency), 400, "validation_error", param="currency")
    assert invoice_count() == 0


@pytest.mark.parametrize("order_currency", ["gbp", "EURO", 1])
def test_malformed_order_currency_is_refused(client, auth, order_currency):
    response = create(client, auth, order_currency=order_currency)
    assert_legacy_error(response, 400, "validation_error", param="order_currency")


def test_store_id_of_the_keys_store_is_accepted(client, auth, store):
    assert create(client, auth, store_id=str(store.id)).status_code == 201


@pytest.mark.parametrize("which", ["other", "garbage", "hex"])
def test_store_id_that_differs_is_store_mismatch_in_legacy_shape(client, auth, store, other_store, which):
    store_id = {"other": str(other_store.id), "garbage": "not-a-store", "hex": other_store.id.hex}[which]
    assert_legacy_error(create(client, auth, store_id=store_id), 403, "store_mismatch", param="store_id")
    assert invoice_count() == 0


def test_store_without_payout_wallet_is_refused_in_legacy_shape(client, app):
    store = factories.make_store(payout_wallet=None)
    auth = {"Authorization": f"Bearer {factories.make_key(store)}"}
    assert_legacy_error(create(client, auth), 400, "payout_wallet_not_configured")
    assert invoice_count() == 0


@pytest.mark.parametrize("amount, written", [
    ("10", "10.00"), ("10.5", "10.50"), ("0.01", "0.01"), ("999999999999.99", "999999999999.99"),
    ("007", "7.00"),
])
def test_amount_strings_are_accepted_and_written_with_two_decimals(client, auth, amount, written):
    response = create(client, auth, amount=amount)
    assert response.status_code == 201
    assert response.get_json()["amount"] == written
    assert Invoice.get(Invoice.public_id == response.get_json()["id"]).amount == Decimal(amount)


@pytest.mark.parametrize("amount", [
    10, 10.5, True, None, ["10"], {"value": "10"},          # not strings
    "0", "0.00", "-1", "-0.01",                              # not positive
    "10.001", "1234567890123", "1234567890123.00",           # too many decimals / digits
    "", " 10", "10 ", "10\n", "1e3", "10.", ".5", "1,000", "abc", "NaN", "١٠",
])
def test_bad_amounts_are_refused(client, auth, amount):
    assert_legacy_error(create(client, auth, amount=amount), 400, "validation_error", param="amount")
    assert invoice_count() == 0


@pytest.mark.parametrize("currency, amount, written", [
    ("JPY", "1500", "1500"), ("KWD", "1.25", "1.250"), ("KWD", "1.005", "1.005"), ("EUR", "9.9", "9.90"),
])
def test_amounts_are_written_with_their_currency_minor_units(client, auth, currency, amount, written):
    response = create(client, auth, amount=amount, currency=currency)
    assert response.status_code == 201 and response.get_json()["amount"] == written
    invoice = client.get(f"/v1/invoices/{response.get_json()['id']}", headers=auth).get_json()
    assert (invoice["amount"], invoice["order_amount"], invoice["order_currency"]) == (written, written, currency)


@pytest.mark.parametrize("currency, amount", [("JPY", "1500.5"), ("JPY", "1500.00"), ("KWD", "1.2500"),
                                              ("USD", "10.001")])
def test_more_decimals_than_the_currency_has_are_refused(client, auth, currency, amount):
    body = assert_legacy_error(create(client, auth, amount=amount, currency=currency), 400, "validation_error",
                               param="amount")
    assert currency in body["error"]
    assert invoice_count() == 0


@pytest.mark.parametrize("body", [{"order_amount": "12.5", "order_currency": "JPY"},
                                  {"order_amount": "12.555", "currency": "EUR"}])
def test_an_order_amount_is_held_to_its_own_currency(client, auth, body):
    assert_legacy_error(create(client, auth, **body), 400, "validation_error", param="order_amount")


def test_an_order_amount_in_yen_is_written_as_yen(client, auth):
    response = create(client, auth, amount="10.00", order_amount="1500", order_currency="JPY")
    invoice = client.get(f"/v1/invoices/{response.get_json()['id']}", headers=auth).get_json()
    assert (invoice["order_amount"], invoice["order_currency"]) == ("1500", "JPY")


def test_amount_sent_as_a_raw_json_number_is_refused(client, auth):
    response = client.post("/v1/invoices", headers=auth, data=b'{"amount": 10.00}',
                           content_type="application/json")
    assert_legacy_error(response, 400, "validation_error", param="amount")


def test_missing_amount_is_refused(client, auth):
    response = client.post("/v1/invoices", headers=auth, json={"currency": "USD"})
    assert_legacy_error(response, 400, "validation_error", param="amount")


@pytest.mark.parametrize("field, value", [
    ("external_order_id", "x" * 129),
    ("external_order_id", ""),
    ("external_order_id", "line\nbreak"),
    ("external_order_id", 12345),
    ("return_url", "https://shop.example/" + "a" * 2048),
    ("return_url", "javascript:alert(1)"),
    ("return_url", "/relative/path"),
    ("return_url", 'http://a"onmouseover="alert(1)'),        # escaped on the page, but not a host
    ("return_url", "https://shop.example./done"),
    ("return_url", "https://[::1%25lo]/done"),
    ("return_url", "https://shop.example:0/done"),
    ("return_url", "http://[::1"),
    ("callback_url", "http://shop.example/hook"),             # callbacks must be https
    ("callback_url", "https://shop.example/" + "a" * 2048),
    ("customer_id", "not-a-uuid"),
    ("metadata", "a string"),
    ("metadata", ["a", "list"]),
])
def test_bad_strings_are_refused_naming_the_field(client, auth, field, value):
    assert_legacy_error(create(client, auth, **{field: value}), 400, "validation_error", param=field)
    assert invoice_count() == 0


def test_strings_at_their_limits_are_accepted(client, auth):
    customer = uuid.uuid4()
    response = create(client, auth, external_order_id="o" * 128, customer_id=str(customer),
                      return_url="https://shop.example/" + "a" * 2000,
                      callback_url="https://shop.example/hook")
    assert response.status_code == 201
    invoice = client.get(f"/v1/invoices/{response.get_json()['id']}", headers=auth).get_json()
    assert invoice["external_order_id"] == "o" * 128
    assert invoice["customer_id"] == str(customer)
    assert invoice["return_url"].startswith("https://shop.example/aaa")


def test_unknown_field_is_refused_naming_it(client, auth):
    body = assert_legacy_error(create(client, auth, colour="red"), 400, "validation_error", param="colour")
    assert "colour" in body["error"]
    assert invoice_count() == 0


@pytest.mark.parametrize("raw", [b"{bad json", b'{"amount": "10"', b"\xff\xfe\x00", b'{"amount": NaN}',
                                 b'{"amount": Infinity}', b"[" * 5000 + b"]" * 5000])
def test_malformed_json_is_invalid_json_in_legacy_shape(client, auth, raw):
    response = client.post("/v1/invoices", headers=auth, data=raw, content_type="application/json")
    assert_legacy_error(response, 400, "invalid_json")


@pytest.mark.parametrize("raw", [b"[]", b'"amount"', b"10", b"null", b"true"])
def test_json_that_is_not_an_object_is_invalid_json(client, auth, raw):
    response = client.post("/v1/invoices", headers=auth, data=raw, content_type="application/json")
    assert_legacy_error(response, 400, "invalid_json")


def test_empty_body_is_read_as_an_empty_object(client, auth):
    response = client.post("/v1/invoices", headers=auth, data=b"", content_type="application/json")
    assert_legacy_error(response, 400, "validation_error", param="amount")


def test_integration_key_must_send_external_order_id(client, store):
    auth = {"Authorization": f"Bearer {factories.make_key(store, kind='integration')}"}
    assert_legacy_error(create(client, auth), 400, "validation_error", param="external_order_id")
    assert create(client, auth, external_order_id="wc-1001").status_code == 201


def test_integration_key_cannot_set_a_callback_url(client, store):
    auth = {"Authorization": f"Bearer {factories.make_key(store, kind='integration')}"}
    response = create(client, auth, external_order_id="wc-1", callback_url="https://shop.example/cb")
    assert_legacy_error(response, 403, "integration_key_forbidden", param="callback_url")
    assert invoice_count() == 0


def test_the_invoice_row_holds_what_was_sent(client, auth, store):
    response = create(client, auth, amount="19.99", external_order_id="A-1",
                      return_url="https://shop.example/done", callback_url="https://shop.example/cb")
    row = Invoice.get(Invoice.public_id == response.get_json()["id"])
    assert row.store_id == store.id
    assert (row.status, row.amount, row.currency) == ("pending", Decimal("19.99"), "USD")
    assert (row.external_order_id, row.return_url, row.callback_url) == (
        "A-1", "https://shop.example/done", "https://shop.example/cb")
    assert row.paid_at is None and row.deposit_seen_at is None
