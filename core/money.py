"""Money is `Decimal` parsed from strings, never float (docs/api.md#money-strings-and-sizes).

A fiat amount has at most its currency's minor units in a request and exactly that many in a
response (core/currencies.py: JPY "1500", USD "10.00", KWD "1.250")."""
from decimal import ROUND_HALF_UP, Decimal
import re

from core import currencies

# ASCII digits only, anchored with \Z: `\d` alone accepts other scripts' digits, `$` a trailing newline.
CRYPTO_PATTERN = re.compile(r"^\d{1,18}(\.\d{1,18})?\Z", re.ASCII)
_FIAT_PATTERNS = {places: re.compile(r"^\d{1,12}" + (rf"(\.\d{{1,{places}}})?" if places else "") + r"\Z", re.ASCII)
                  for places in range(currencies.MOST_MINOR_UNITS + 1)}
_PLACES_IN_WORDS = {0: "no decimals", 1: "at most one decimal", 2: "at most two decimals",
                    3: "at most three decimals", 4: "at most four decimals"}


def fiat_places(currency: str | None) -> int:
    """The decimals an amount in `currency` may have; an unknown code is held to the widest, so the
    currency's own error is the one a request hears about."""
    return currencies.MINOR_UNITS.get(currency, currencies.MOST_MINOR_UNITS)


def _fiat_shape(currency: str | None) -> str:
    places = fiat_places(currency)
    example = "1500" if places == 0 else "10." + "0" * places
    named = f" ({currency})" if currencies.is_currency(currency) else ""
    return f"must be a decimal string such as \"{example}\", with {_PLACES_IN_WORDS[places]}{named}"


def parse_fiat(text: str, currency: str | None) -> Decimal:
    """Parse a positive amount of `currency`; ValueError says what is wrong."""
    if not isinstance(text, str) or not _FIAT_PATTERNS[fiat_places(currency)].match(text):
        raise ValueError(_fiat_shape(currency))
    return _positive(Decimal(text))


def fiat_places_problem(value: Decimal, currency: str) -> str | None:
    """Why an amount parsed elsewhere has more decimals than `currency` (a refund's or a link update's
    amount, whose currency is not in the request), or None. Written decimals count, as in the text:
    "1500.00" yen is refused as "1500.5" is."""
    if -value.as_tuple().exponent > fiat_places(currency):
        return _fiat_shape(currency)
    return None


def parse_crypto(text: str) -> Decimal:
    if not isinstance(text, str) or not CRYPTO_PATTERN.match(text):
        raise ValueError("must be a decimal string such as \"10.00\", with at most eighteen decimals")
    return _positive(Decimal(text))


def _positive(value: Decimal) -> Decimal:
    if value <= 0:
        raise ValueError("must be greater than zero")
    return value


def minor_unit(currency: str | None) -> Decimal:
    """The smallest amount of `currency` (0.01 USD, 1 JPY); two decimals for a code that is not a
    currency (an old row's `order_currency`), as every amount was written before."""
    return Decimal(1).scaleb(-currencies.MINOR_UNITS.get(currency, 2))


def format_fiat(value: Decimal | None, currency: str | None) -> str | None:
    """Fiat amounts are written with exactly their currency's minor units ("1500", "10.00", "1.250")."""
    if value is None:
        return None
    # Half away from zero, and never "-0", as PostgreSQL's round() writes the exports (services/books/exports.py).
    written = Decimal(value).quantize(minor_unit(currency), rounding=ROUND_HALF_UP)
    return str(written.copy_abs() if written == 0 else written)


def format_crypto(value: Decimal | None) -> str | None:
    """Crypto amounts: exact, never rounded and never an exponent, with at least the two decimals of
    fiat amounts ("25.00", "25.125", "0.00012"), so a settlement reads like the invoice it pays
    (docs/api.md#money-strings-and-sizes)."""
    if value is None:
        return None
    exact = Decimal(value).normalize()
    return format(exact if exact.as_tuple().exponent < -1 else exact.quantize(Decimal("0.01")), "f")


def check_fiat_places(value: Decimal | None, currency: str, param: str) -> None:
    """Refuse (400 naming `param`) an amount with more decimals than `currency` has."""
    from core.errors import validation_error     # core.errors is plain ground too; imported here to keep money light

    problem = None if value is None else fiat_places_problem(value, currency)
    if problem:
        raise validation_error(param, problem)


def format_rate(value: Decimal | None) -> str | None:
    """An exchange rate: exact, no exponent, at least four significant digits ("1.080", "0.006650")."""
    if value is None:
        return None
    exact = Decimal(value).normalize()
    digits = len(exact.as_tuple().digits)
    if digits < 4:
        exact = exact.quantize(Decimal(1).scaleb(exact.as_tuple().exponent - (4 - digits)))
    return format(exact, "f")


def invoice_money_lines(invoice: dict, estimate: dict | None = None) -> list[tuple[str, str]]:
    """(label, text) of an invoice's money, as the dashboard's invoice page and the merchant's
    payment mail show it: the one place these are put in words. `invoice` is the API's shape (its
    amounts already written in their minor units, the payout in the asset's, the rate with four
    significant digits or more); `estimate`, a dry quote's terms (EstimateSchema) for an invoice
    whose buyer has not committed yet. Facts not known yet are left out."""
    currency, asset = invoice["currency"], invoice.get("output_asset")
    lines = [("Amount", f"{invoice['amount']} {currency}")]
    rate, committed = invoice.get("exchange_rate"), invoice.get("payout_amount") is not None
    if rate:
        lines.append(("Exchange rate", f"1 {rate['from']} = {rate['rate']} {rate['to']} "
                                       f"(from {rate['source']}, fixed {rate['fixed_at']})"))
    elif committed:
        lines.append(("Exchange rate", "none: paid out at par"))
    elif estimate is not None:
        guess = estimate.get("exchange_rate")
        lines.append(("Exchange rate", f"estimate: 1 {guess['from']} = {guess['rate']} {guess['to']} today "
                                       f"(from {guess['source']}), fixed when the buyer commits" if guess
                      else "estimate: at par"))
    if committed:
        lines.append(("Payout", f"{invoice['payout_amount']} {asset}"))
    elif estimate is not None:
        lines.append(("Payout", f"estimate: {estimate['payout_amount']} {asset}"))
    fee_bps = invoice.get("fee_bps") if committed else (estimate or {}).get("fee_bps")
    if fee_bps is not None:
        fee = f"{invoice['fee_amount']} {currency} ({fee_bps} bps)" if committed and invoice.get("fee_amount") \
            else f"{fee_bps} bps" if fee_bps else "none"
        lines.append(("Fee", fee if committed else f"estimate: {fee}"))
    for label, name in (("Paid", "paid_amount"), ("Received", "received_amount"),
                        ("Difference", "difference_amount"), ("Refunded", "refunded_amount")):
        if invoice.get(name) is not None:
            lines.append((label, f"{invoice[name]} {currency}"))
    return lines
