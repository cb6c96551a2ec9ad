"""Money is `Decimal` parsed from strings, never float (docs/api.md#money-strings-and-sizes)."""
import re
from decimal import Decimal

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
    """Crypto amounts: as many decimals as needed, never an exponent ("0.00012", "3")."""
    if value is None:
        return None
    text = format(Decimal(value).normalize(), "f")
    return text


def format_exact(value: Decimal | None) -> str | None:
    """A sum of asset amounts at par with fiat: two decimals when that is exact, else every decimal."""
    if value is None:
        return None
    return format_fiat(value) if value == Decimal(value).quantize(_CENT) else format_crypto(value)
