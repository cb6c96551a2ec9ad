"""core/money.py: amounts are decimal strings (docs/api.md#money-strings-and-sizes), Decimal inside, never float."""
from decimal import Decimal

import pytest

from core import money


@pytest.mark.parametrize("text, value", [
    ("10", Decimal("10")), ("10.5", Decimal("10.5")), ("0.01", Decimal("0.01")),
    ("999999999999.99", Decimal("999999999999.99")), ("000000000001", Decimal("1")),
])
def test_fiat_amounts_parse_exactly(text, value):
    parsed = money.parse_amount(text)
    assert parsed == value and isinstance(parsed, Decimal)


@pytest.mark.parametrize("text", [
    "0", "0.00", "-1", "+1", "10.001", "1234567890123", "1e3", "10.", ".5", "", " 1", "1 ", "1\n",
    "1,5", "١٠", "１０", "NaN", "Infinity", "0x10",
])
def test_bad_fiat_amounts_are_refused(text):
    with pytest.raises(ValueError):
        money.parse_amount(text)


@pytest.mark.parametrize("value", [10, 10.5, Decimal("10"), None, b"10"])
def test_only_strings_are_amounts(value):
    with pytest.raises(ValueError):
        money.parse_amount(value)


def test_zero_is_refused_with_its_own_message():
    with pytest.raises(ValueError, match="greater than zero"):
        money.parse_amount("0.00")


@pytest.mark.parametrize("text", ["0.000000000000000001", "123456789012345678.123456789012345678", "3"])
def test_crypto_amounts_take_eighteen_digits_each_side(text):
    assert money.parse_amount(text, fiat=False) == Decimal(text)


@pytest.mark.parametrize("text", ["1234567890123456789", "1.1234567890123456789", "0", "-0.1", "1e-9"])
def test_bad_crypto_amounts_are_refused(text):
    with pytest.raises(ValueError):
        money.parse_amount(text, fiat=False)


@pytest.mark.parametrize("value, text", [
    (Decimal("10"), "10.00"), (Decimal("10.5"), "10.50"), (Decimal("0.01"), "0.01"),
    (Decimal("10.000000000000000000"), "10.00"), (Decimal("-0.3"), "-0.30"), (None, None),
])
def test_fiat_is_written_with_exactly_two_decimals(value, text):
    assert money.format_fiat(value) == text


@pytest.mark.parametrize("value, text", [
    (Decimal("0.000120"), "0.00012"), (Decimal("3"), "3.00"), (Decimal("1E+2"), "100.00"),
    (Decimal("1E-18"), "0.000000000000000001"), (Decimal("10.500000000000000000"), "10.50"),
    (Decimal("25.125000"), "25.125"), (None, None),
])
def test_crypto_is_written_exactly_without_exponent_and_with_at_least_two_decimals(value, text):
    assert money.format_crypto(value) == text
