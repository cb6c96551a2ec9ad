"""core/currencies.py: ISO 4217 codes and their minor units."""
import pytest

from core import currencies


@pytest.mark.parametrize("code, places", [("JPY", 0), ("KRW", 0), ("USD", 2), ("EUR", 2), ("KWD", 3),
                                          ("BHD", 3), ("TND", 3), ("CLF", 4)])
def test_minor_units_are_iso_4217s(code, places):
    assert currencies.minor_units(code) == places


@pytest.mark.parametrize("code", ["usd", "US", "XAU", "XXX", "ABC", "", None, 840, "HRK"])
def test_codes_without_minor_units_or_withdrawn_are_not_currencies(code):
    assert not currencies.is_currency(code)


def test_every_code_is_three_upper_case_letters_once():
    assert all(len(code) == 3 and code.isalpha() and code.isupper() for code in currencies.MINOR_UNITS)
    assert len(currencies.MINOR_UNITS) > 150
