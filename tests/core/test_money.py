"""core/money.py: amounts are decimal strings (docs/api.md#money-strings-and-sizes), Decimal inside, never float."""
from decimal import Decimal

import pytest

from core import money


@pytest.mark.parametrize("text, value", [
    ("10", Decimal("10")), ("10.5", Decimal("10.5")), ("0.01", Decimal("0.01")),
    ("999999999999.99", Decimal("999999999999.99")), ("000000000001", Decimal("1")),
])
def test_fiat_amounts_parse_exactly(text, value):
    parsed = money.parse_fiat(text, "USD")
    assert parsed == value and isinstance(parsed, Decimal)


@pytest.mark.parametrize("text", [
    "0", "0.00", "-1", "+1", "10.001", "1234567890123", "1e3", "10.", ".5", "", " 1", "1 ", "1\n",
    "1,5", "١٠", "１０", "NaN", "Infinity", "0x10",
])
def test_bad_fiat_amounts_are_refused(text):
    with pytest.raises(ValueError):
        money.parse_fiat(text, "USD")


@pytest.mark.parametrize("value", [10, 10.5, Decimal("10"), None, b"10"])
def test_only_strings_are_amounts(value):
    with pytest.raises(ValueError):
        money.parse_fiat(value, "USD")


def test_zero_is_refused_with_its_own_message():
    with pytest.raises(ValueError, match="greater than zero"):
        money.parse_fiat("0.00", "USD")


@pytest.mark.parametrize("text", ["0.000000000000000001", "123456789012345678.123456789012345678", "3"])
def test_crypto_amounts_take_eighteen_digits_each_side(text):
    assert money.parse_crypto(text) == Decimal(text)


@pytest.mark.parametrize("text", ["1234567890123456789", "1.1234567890123456789", "0", "-0.1", "1e-9"])
def test_bad_crypto_amounts_are_refused(text):
    with pytest.raises(ValueError):
        money.parse_crypto(text)


@pytest.mark.parametrize("value, text", [
    (Decimal("10"), "10.00"), (Decimal("10.5"), "10.50"), (Decimal("0.01"), "0.01"),
    (Decimal("10.000000000000000000"), "10.00"), (Decimal("-0.3"), "-0.30"), (None, None),
])
def test_usd_is_written_with_exactly_two_decimals(value, text):
    assert money.format_fiat(value, "USD") == text


@pytest.mark.parametrize("value, text", [
    (Decimal("0.000120"), "0.00012"), (Decimal("3"), "3.00"), (Decimal("1E+2"), "100.00"),
    (Decimal("1E-18"), "0.000000000000000001"), (Decimal("10.500000000000000000"), "10.50"),
    (Decimal("25.125000"), "25.125"), (None, None),
])
def test_crypto_is_written_exactly_without_exponent_and_with_at_least_two_decimals(value, text):
    assert money.format_crypto(value) == text


@pytest.mark.parametrize("currency, text", [
    ("JPY", "1500"), ("JPY", "1"), ("USD", "10.5"), ("KWD", "1.250"), ("KWD", "1.2"), ("CLF", "0.0001"),
])
def test_each_currency_takes_up_to_its_minor_units(currency, text):
    assert money.parse_fiat(text, currency) == Decimal(text)


@pytest.mark.parametrize("currency, text", [
    ("JPY", "1500.5"), ("JPY", "1500.00"), ("JPY", "1500."), ("USD", "10.001"), ("KWD", "1.2500"),
    ("CLF", "0.00001"),
])
def test_more_decimals_than_the_currency_has_are_refused_naming_it(currency, text):
    with pytest.raises(ValueError, match=currency):
        money.parse_fiat(text, currency)


@pytest.mark.parametrize("currency, value, text", [
    ("JPY", Decimal("1500"), "1500"), ("JPY", Decimal("1500.000000"), "1500"), ("USD", Decimal("10"), "10.00"),
    ("KWD", Decimal("1.25"), "1.250"), ("BHD", Decimal("-0.3"), "-0.300"), ("JPY", Decimal("-0.13"), "0"), ("CLF", Decimal("2"), "2.0000"),
])
def test_amounts_are_written_with_exactly_their_currency_minor_units(currency, value, text):
    assert money.format_fiat(value, currency) == text


def test_a_code_that_is_not_a_currency_reads_widest_and_writes_two_decimals():
    assert money.parse_fiat("1.2345", "ABC") == Decimal("1.2345")
    assert money.format_fiat(Decimal("1.5"), "ABC") == "1.50"


@pytest.mark.parametrize("currency, value, refused", [
    ("JPY", Decimal("1500"), False), ("JPY", Decimal("1500.00"), True), ("JPY", Decimal("1500.5"), True),
    ("USD", Decimal("1.23"), False), ("USD", Decimal("1.234"), True), ("KWD", Decimal("1.234"), False),
])
def test_an_amount_parsed_elsewhere_is_checked_against_its_currency(currency, value, refused):
    assert (money.fiat_places_problem(value, currency) is not None) == refused


def test_an_invoices_money_lines_leave_out_what_is_not_known_yet():
    fresh = {"amount": "10.00", "currency": "USD", "output_asset": "usdc.near", "exchange_rate": None,
             "payout_amount": None, "fee_bps": None, "fee_amount": None, "paid_amount": None}
    assert money.invoice_money_lines(fresh) == [("Amount", "10.00 USD")]
    estimate = {"estimate": True, "exchange_rate": None, "payout_amount": "10.00", "fee_bps": 0}
    assert money.invoice_money_lines(fresh, estimate) == [
        ("Amount", "10.00 USD"), ("Exchange rate", "estimate: at par"), ("Payout", "estimate: 10.00 usdc.near"),
        ("Fee", "estimate: none")]
    committed = {**fresh, "payout_amount": "10.00", "fee_bps": 0, "paid_amount": "10.05",
                 "difference_amount": "0.00"}
    assert money.invoice_money_lines(committed)[1:] == [
        ("Exchange rate", "none: paid out at par"), ("Payout", "10.00 usdc.near"), ("Fee", "none"),
        ("Paid", "10.05 USD"), ("Difference", "0.00 USD")]
