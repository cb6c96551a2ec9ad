"""Exchange-rate sources behind one interface (docs/currencies.md#rate-sources).

A source's `fetch()` returns its latest published rates as US dollars per unit of each currency,
with the time the source says they hold; any failure (no answer, an HTTP error, a body that is not
the protocol's) is `RateSourceUnavailable`, never a partial or guessed table. Only the scheduler's
refresh calls them (services/engine/exchange_rates.py): a buyer's request reads the stored rates.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation, localcontext

import requests

TIMEOUT_SECONDS = 10
SIGNIFICANT_DIGITS = 12          # a derived rate (a cross rate, an inverse) keeps this many


class RateSourceUnavailable(Exception):
    """The source gave no usable table this time."""


@dataclass(frozen=True)
class PublishedRates:
    source: str
    as_of: dt.datetime                    # naive UTC: when the source says these rates hold
    usd_per_unit: dict[str, Decimal]      # 1 unit of the currency = this many US dollars


class PublishedDocument:
    """A source that is one public document at `url`: each source's module says how to `read` it."""
    name: str
    max_age_seconds: int

    def __init__(self, url: str):
        self.url = url

    def fetch(self) -> PublishedRates:
        return self.read(get(self.url))

    @staticmethod
    def read(body: bytes) -> PublishedRates:
        raise NotImplementedError


def get(url: str, *, session: requests.Session | None = None) -> bytes:
    """One GET of a public, keyless document; RateSourceUnavailable on anything but a 200."""
    try:
        response = (session or requests).get(url, timeout=TIMEOUT_SECONDS, headers={"User-Agent": "tender-rates"})
    except requests.RequestException as error:
        raise RateSourceUnavailable(f"no answer from {url}: {error.__class__.__name__}") from None
    if response.status_code != 200:
        raise RateSourceUnavailable(f"{url} answered HTTP {response.status_code}")
    return response.content


def positive_decimal(raw) -> Decimal:
    try:
        value = Decimal(str(raw))
    except (InvalidOperation, ValueError):
        raise RateSourceUnavailable(f"not a rate: {raw!r}") from None
    if not value.is_finite() or value <= 0:
        raise RateSourceUnavailable(f"not a positive rate: {raw!r}")
    return value


def divided(numerator: Decimal, denominator: Decimal) -> Decimal:
    with localcontext() as context:
        context.prec = SIGNIFICANT_DIGITS
        return numerator / denominator


def source(name: str, settings):
    """The client of the source `name` (FX_PROVIDER), pointed where the settings say."""
    if name == "ecb":
        from providers.fx.ecb import EcbReferenceRates

        return EcbReferenceRates(settings.fx_ecb_url)
    if name == "exchangerate_api":
        from providers.fx.exchangerate_api import ExchangeRateApiOpenAccess

        return ExchangeRateApiOpenAccess(settings.fx_exchangerate_api_url)
    raise ValueError(f"no rate source client named {name!r}")
