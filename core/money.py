"""Money is `Decimal` parsed from strings, never float (docs/api.md#money-strings-and-sizes)."""
from decimal import Decimal
import re

# ASCII digits only, anchored with \Z: `\d` alone accepts other scripts' digits, `$` a trailing newline.
FIAT_PATTERN = re.compile(r"^\d{1,12}(\.\d{1,2})?\Z", re.ASCII)
CRYPTO_PATTERN = re.compile(r"^\d{1,18}(\.\d{1,18})?\Z", re.ASCII)
_CENT = Decimal("0.01")


def parse_amount(text: str, *, fiat: bool = True) -> Decimal:
    """Parse a positive decimal string; ValueError says what is wrong."""
    pattern = FIAT_PATTERN if fiat else CRYPTO_PATTERN
    if not isinstance(text, str) or not pattern.match(text):
        places = "two" if fiat else "eighteen"
        raise ValueError(f"must be a decimal string such as \"10.00\", with at most {places} decimals")
    value = Decimal(text)
    if value <= 0:
        raise ValueError("must be greater than zero")
    return value


def format_fiat(value: Decimal | None) -> str | None:
    """Fiat amounts are written with exactly two decimals ("10.00")."""
    return None if value is None else str(Decimal(value).quantize(_CENT))


def format_crypto(value: Decimal | None) -> str | None:
    """Crypto amounts: exact, never rounded and never an exponent, with at least the two decimals of
    fiat amounts ("25.00", "25.125", "0.00012"), so a settlement reads like the invoice it pays
    (docs/api.md#money-strings-and-sizes)."""
    if value is None:
        return None
    exact = Decimal(value).normalize()
    return format(exact if exact.as_tuple().exponent < -1 else exact.quantize(_CENT), "f")
