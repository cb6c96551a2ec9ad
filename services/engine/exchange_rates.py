"""The rate an invoice is fixed at, and where rates come from (docs/currencies.md).

Buyers' requests only read `exchange_rate` rows: the sandbox's are set by the operator (`flask
--app wsgi rates set`), the real sources' are written by the scheduler's `refresh`. A rate is usable
while fresh for its source; when two fresh sources disagree by more than FX_MAX_DIVERGENCE_BPS, none
is. No usable rate is `exchange_rate_unavailable` (503), never a stale, made-up or par rate.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
import logging
import threading
import time

from core import currencies
from core.errors import Unavailable
from infra import metrics
from models.base import db
from models.exchange_rates import ExchangeRate
from providers import fx
from providers.fx import ecb, exchangerate_api

log = logging.getLogger("tender.rates")
SANDBOX = "sandbox"
DEFAULT_MAX_AGE_SECONDS = {ecb.NAME: ecb.MAX_AGE_SECONDS, exchangerate_api.NAME: exchangerate_api.MAX_AGE_SECONDS}
REFRESH_SECONDS = 3600            # the scheduler's pace: both real sources publish daily
BREAKER_FAILURES = 3              # a source failing this many refreshes in a row rests…
BREAKER_REST_SECONDS = 900        # …this long before it is asked again


@dataclass(frozen=True)
class RatePolicy:
    sources: tuple[str, ...]
    max_age_seconds: int | None = None       # FX_MAX_AGE_SECONDS: None is each source's own
    max_divergence_bps: int = 100

    @classmethod
    def of(cls, settings) -> RatePolicy:
        return cls(settings.fx_providers, settings.fx_max_age_seconds, settings.fx_max_divergence_bps)

    def max_age(self, source: str) -> dt.timedelta | None:
        """How old a rate of `source` may be; None for the sandbox's, which the operator sets."""
        if source == SANDBOX:
            return None
        return dt.timedelta(seconds=self.max_age_seconds or DEFAULT_MAX_AGE_SECONDS[source])


@dataclass(frozen=True)
class FixedRate:
    """1 `from_currency` = `rate` `to_currency`, from `source`."""
    from_currency: str
    to_currency: str
    rate: Decimal
    source: str


def unavailable(currency: str) -> Unavailable:
    metrics.count("exchange_rate_unavailable", currency if currencies.is_currency(currency) else "other")
    return Unavailable("exchange_rate_unavailable",
                       f"No current {currency} exchange rate; payment is briefly unavailable. Retry shortly.",
                       retry_after=60)


def payout_currency(output_asset: str) -> str:
    return currencies.asset_currency(output_asset) or "USD"


def rate_for(currency: str, output_asset: str, policy: RatePolicy, *, now: dt.datetime) -> FixedRate | None:
    """The rate to price `currency` in `output_asset` at now; None at par (the asset is worth that
    currency). Raises `exchange_rate_unavailable` when no source has a usable one."""
    target = payout_currency(output_asset)
    if currency == target:
        return None
    dollars_per_unit, source = usd_value(currency, policy, now=now)
    if target != "USD":
        dollars_per_target, _ = usd_value(target, policy, now=now)
        dollars_per_unit = fx.divided(dollars_per_unit, dollars_per_target)
    return FixedRate(currency, target, dollars_per_unit, source)


def usd_value(currency: str, policy: RatePolicy, *, now: dt.datetime) -> tuple[Decimal, str]:
    """US dollars per unit of `currency`, and the source: the preferred fresh source's, if no other
    fresh source disagrees beyond the limit."""
    if currency == "USD":
        return Decimal(1), "par"
    rows = {row.source: row for row in ExchangeRate.select().where(
        (ExchangeRate.currency == currency) & ExchangeRate.source.in_(policy.sources))}
    fresh = [rows[name] for name in policy.sources if name in rows and _is_fresh(rows[name], policy, now)]
    if not fresh:
        raise unavailable(currency)
    preferred = fresh[0]
    for other in fresh[1:]:
        gap_bps = abs(preferred.rate - other.rate) / min(preferred.rate, other.rate) * 10000
        if gap_bps > policy.max_divergence_bps:
            log.warning("rate sources disagree on %s: %s says %s, %s says %s (%.0f bps); no rate is used",
                        currency, preferred.source, preferred.rate, other.source, other.rate, gap_bps)
            metrics.count("exchange_rate_divergence", currency)
            raise unavailable(currency)
    return preferred.rate, preferred.source


def _is_fresh(row: ExchangeRate, policy: RatePolicy, now: dt.datetime) -> bool:
    max_age = policy.max_age(row.source)
    return max_age is None or now - row.as_of <= max_age


def health(supported: tuple[str, ...], policy: RatePolicy, *, now: dt.datetime) -> str:
    """`ok` when every supported currency can be priced in dollars now, else `degraded`."""
    for currency in supported:
        try:
            usd_value(currency, policy, now=now)
        except Unavailable:
            return "degraded"
    return "ok"


# --- the sandbox's rates -------------------------------------------------------------------

def set_sandbox_rate(currency: str, rate: Decimal | None, *, now: dt.datetime) -> None:
    """`flask rates set`: effective for the next commit, in every process (they read this row)."""
    with db.atomic():
        ExchangeRate.delete().where((ExchangeRate.source == SANDBOX) & (ExchangeRate.currency == currency)).execute()
        if rate is not None:
            ExchangeRate.create(source=SANDBOX, currency=currency, rate=rate, as_of=now, fetched_at=now)


def stored_rates() -> list[ExchangeRate]:
    return list(ExchangeRate.select().order_by(ExchangeRate.source, ExchangeRate.currency))


# --- the real sources' refresh ---------------------------------------------------------------

_breakers: dict[str, dict] = {}
_breakers_lock = threading.Lock()


def refresh(settings, *, now: dt.datetime, clients: dict | None = None) -> dict[str, str]:
    """Ask each real source for its table and store what it publishes; a source whose breaker is
    open is not asked. Returns each source's outcome (`ok`, `failed`, `resting`)."""
    outcomes = {}
    for name in (name for name in settings.fx_providers if name != SANDBOX):
        client = (clients or {}).get(name) or fx.source(name, settings)
        outcomes[name] = _refresh_one(client, now=now)
        metrics.count("exchange_rate_refreshes", name, outcomes[name])
    return outcomes


def _refresh_one(client, *, now: dt.datetime) -> str:
    with _breakers_lock:
        breaker = _breakers.setdefault(client.name, {"failures": 0, "rest_until": 0.0})
        if breaker["rest_until"] > time.monotonic():
            return "resting"
    try:
        published = client.fetch()
    except fx.RateSourceUnavailable as error:
        with _breakers_lock:
            breaker["failures"] += 1
            if breaker["failures"] >= BREAKER_FAILURES:
                breaker["rest_until"], breaker["failures"] = time.monotonic() + BREAKER_REST_SECONDS, 0
        log.warning("rate source %s gave no rates: %s", client.name, error)
        return "failed"
    with _breakers_lock:
        breaker["failures"] = 0
    store_published(published, now=now)
    return "ok"


def store_published(published: fx.PublishedRates, *, now: dt.datetime) -> None:
    """Replace the source's rows with its table (only ISO 4217 currencies are kept)."""
    rows = [{"source": published.source, "currency": code, "rate": rate, "as_of": published.as_of, "fetched_at": now}
            for code, rate in sorted(published.usd_per_unit.items()) if currencies.is_currency(code)]
    with db.atomic():
        ExchangeRate.delete().where(ExchangeRate.source == published.source).execute()
        for start in range(0, len(rows), 100):
            ExchangeRate.insert_many(rows[start:start + 100]).execute()
