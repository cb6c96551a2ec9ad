"""The European Central Bank's euro foreign exchange reference rates: one public XML document,
`eurofxref-daily.xml`, published on each TARGET working day around 16:00 CET, no key needed.

    <gesmes:Envelope …><Cube><Cube time="2026-11-26"><Cube currency="USD" rate="1.0842"/>…

Rates are units of each currency per euro; Tender wants US dollars per unit, so 1 X = USD/X.
The rates are set at 14:10 CET (13:10 UTC) on the day `time` names; nothing is published at
weekends and on TARGET holidays, so a rate is four days old by a Tuesday after a holiday Monday:
`MAX_AGE_SECONDS` allows that, no more.
"""
from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ElementTree

from providers.fx import PublishedDocument, PublishedRates, RateSourceUnavailable, divided, positive_decimal

NAME = "ecb"
MAX_AGE_SECONDS = 4 * 86400
_NAMESPACE = "{http://www.ecb.int/vocabulary/2002-08-01/eurofxref}"
_SET_AT = dt.time(13, 10)


def parse(body: bytes) -> PublishedRates:
    # The standard parser expands entities: a document declaring any is not the ECB's.
    if b"<!DOCTYPE" in body or b"<!ENTITY" in body:
        raise RateSourceUnavailable("the ECB document declares a DTD")
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError as error:
        raise RateSourceUnavailable(f"the ECB document is not XML: {error}") from None
    day = next((cube for cube in root.iter(_NAMESPACE + "Cube") if cube.get("time")), None)
    if day is None:
        raise RateSourceUnavailable("the ECB document has no dated Cube")
    try:
        as_of = dt.datetime.combine(dt.date.fromisoformat(day.get("time")), _SET_AT)
    except ValueError:
        raise RateSourceUnavailable(f"the ECB date is not a date: {day.get('time')!r}") from None
    per_euro = {cube.get("currency"): positive_decimal(cube.get("rate"))
                for cube in day.iter(_NAMESPACE + "Cube") if cube.get("currency")}
    if "USD" not in per_euro:
        raise RateSourceUnavailable("the ECB document has no USD rate")
    dollars_per_euro = per_euro.pop("USD")
    rates = {code: divided(dollars_per_euro, units) for code, units in per_euro.items()}
    rates["EUR"] = dollars_per_euro
    return PublishedRates(NAME, as_of, rates)


class EcbReferenceRates(PublishedDocument):
    name, max_age_seconds = NAME, MAX_AGE_SECONDS
    read = staticmethod(parse)
