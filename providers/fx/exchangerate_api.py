"""ExchangeRate-API's open access endpoint (exchangerate-api.com/docs/free): one public JSON
document per base currency, updated once a day, no key needed (attribution asked for, given in
docs/currencies.md). Tender reads `…/v6/latest/USD`:

    {"result": "success", "base_code": "USD", "time_last_update_unix": 1764115351,
     "rates": {"USD": 1, "EUR": 0.9223, "JPY": 150.4, …}}

Rates are units of each currency per dollar, so 1 X = 1/rate dollars. The table is replaced
once a day; `MAX_AGE_SECONDS` (36 hours) allows one missed update. Asking more than about once
an hour may be rate-limited (HTTP 429): the refresh asks hourly.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
import json

from providers.fx import PublishedDocument, PublishedRates, RateSourceUnavailable, divided, positive_decimal

NAME = "exchangerate_api"
MAX_AGE_SECONDS = 36 * 3600


def parse(body: bytes) -> PublishedRates:
    try:
        document = json.loads(body, parse_float=Decimal, parse_int=Decimal)
    except ValueError as error:
        raise RateSourceUnavailable(f"ExchangeRate-API answered something other than JSON: {error}") from None
    if not isinstance(document, dict) or document.get("result") != "success":
        kind = document.get("error-type") if isinstance(document, dict) else None
        raise RateSourceUnavailable(f"ExchangeRate-API did not answer success ({kind or 'no result'})")
    if document.get("base_code") != "USD" or not isinstance(document.get("rates"), dict):
        raise RateSourceUnavailable("ExchangeRate-API's table is not per US dollar")
    updated = document.get("time_last_update_unix")
    if not isinstance(updated, Decimal) or not 0 < updated < 10**11:
        raise RateSourceUnavailable(f"ExchangeRate-API's update time is not a time: {updated!r}")
    as_of = dt.datetime.fromtimestamp(int(updated), dt.timezone.utc).replace(tzinfo=None)
    rates = {code: divided(Decimal(1), positive_decimal(units)) for code, units in document["rates"].items()
             if isinstance(code, str) and code != "USD"}
    return PublishedRates(NAME, as_of, rates)


class ExchangeRateApiOpenAccess(PublishedDocument):
    name, max_age_seconds = NAME, MAX_AGE_SECONDS
    read = staticmethod(parse)
