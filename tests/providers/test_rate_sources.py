"""The real rate sources' clients (providers/fx/) against a local server speaking their protocols,
and the scheduler's refresh: freshness, agreement, the breaker and the metric (docs/currencies.md)."""
import dataclasses
import datetime as dt
from decimal import Decimal

import pytest

from config import Settings
from core.clock import utcnow
from models.base import db
from models.exchange_rates import ExchangeRate
from providers.fx import RateSourceUnavailable
from providers.fx.ecb import EcbReferenceRates
from providers.fx.exchangerate_api import ExchangeRateApiOpenAccess
from services.engine import exchange_rates
from tests.support.rate_servers import ECB_PATH, ER_API_PATH, RateServer


@pytest.fixture
def server():
    with RateServer() as running:
        yield running


@pytest.fixture(autouse=True)
def closed_breakers():
    exchange_rates._breakers.clear()
    yield
    exchange_rates._breakers.clear()


def settings_for(server, sources=("ecb", "exchangerate_api")):
    return dataclasses.replace(Settings(), swap_provider="oneclick", fx_providers=sources,
                               fx_ecb_url=server.url + ECB_PATH, fx_exchangerate_api_url=server.url + ER_API_PATH)


def test_the_ecb_table_becomes_dollars_per_unit(server):
    server.ecb(day="2026-11-26", per_euro={"USD": "1.0842", "JPY": "163.10", "GBP": "0.8530"})
    published = EcbReferenceRates(server.url + ECB_PATH).fetch()
    assert published.as_of == dt.datetime(2026, 11, 26, 13, 10)
    assert published.usd_per_unit["EUR"] == Decimal("1.0842")
    assert published.usd_per_unit["JPY"] == Decimal("0.00664745554874")     # 1.0842 / 163.10
    assert published.usd_per_unit["GBP"] == Decimal("1.27104337632")
    assert "USD" not in published.usd_per_unit


def test_exchangerate_api_numbers_are_read_exactly_and_inverted(server):
    updated = dt.datetime(2026, 11, 27, 0, 2, 31)
    server.er_api(updated=updated, per_dollar={"EUR": "0.9223", "JPY": "150.4", "KWD": "0.30725"})
    published = ExchangeRateApiOpenAccess(server.url + ER_API_PATH).fetch()
    assert published.as_of == updated
    assert published.usd_per_unit["EUR"] == Decimal("1.08424590697")
    assert published.usd_per_unit["KWD"] == Decimal("3.25467860049")


@pytest.mark.parametrize("client, path, status, body", [
    (EcbReferenceRates, ECB_PATH, 503, b"maintenance"),
    (EcbReferenceRates, ECB_PATH, 200, b"<html>not the ECB</html>"),
    (EcbReferenceRates, ECB_PATH, 200, b"<?xml version='1.0'?><!DOCTYPE x [<!ENTITY a 'b'>]><x>&a;</x>"),
    (EcbReferenceRates, ECB_PATH, 200, b"not xml"),
    (ExchangeRateApiOpenAccess, ER_API_PATH, 429, b'{"result":"error","error-type":"rate-limited"}'),
    (ExchangeRateApiOpenAccess, ER_API_PATH, 200, b'{"result":"error","error-type":"unsupported-code"}'),
    (ExchangeRateApiOpenAccess, ER_API_PATH, 200, b'{"result":"success","base_code":"USD","rates":{"EUR":0.9}}'),
    (ExchangeRateApiOpenAccess, ER_API_PATH, 200,
     b'{"result":"success","base_code":"USD","time_last_update_unix":1764115351,"rates":{"EUR":-1}}'),
    (ExchangeRateApiOpenAccess, ER_API_PATH, 200, b"[1, 2]"),
])
def test_anything_but_the_protocol_is_no_table_at_all(server, client, path, status, body):
    server.answer(path, status, body)
    with pytest.raises(RateSourceUnavailable):
        client(server.url + path).fetch()


def test_a_source_that_does_not_answer_is_unavailable():
    with RateServer() as gone:
        url = gone.url + ECB_PATH
    with pytest.raises(RateSourceUnavailable):
        EcbReferenceRates(url).fetch()


def test_the_refresh_stores_both_tables_and_the_quote_reads_them(app, server):
    now = utcnow()
    server.ecb(day=(now - dt.timedelta(days=1)).date().isoformat(), per_euro={"USD": "1.0842", "JPY": "163.10"})
    server.er_api(updated=now - dt.timedelta(hours=3), per_dollar={"EUR": "0.9225", "JPY": "150.4"})
    settings = settings_for(server)
    with db.connection_context():
        assert exchange_rates.refresh(settings, now=now) == {"ecb": "ok", "exchangerate_api": "ok"}
        policy = exchange_rates.RatePolicy.of(settings)
        assert exchange_rates.usd_value("EUR", policy, now=now) == (Decimal("1.0842"), "ecb")
        assert ExchangeRate.select().where(ExchangeRate.source == "exchangerate_api").count() == 2
        assert exchange_rates.health(("USD", "EUR", "JPY"), policy, now=now) == "ok"


def test_a_failing_source_rests_after_three_failures_and_its_old_rates_age_out(app, server):
    now = utcnow()
    settings = settings_for(server, ("ecb",))
    server.ecb(day=(now - dt.timedelta(days=1)).date().isoformat(), per_euro={"USD": "1.0842"})
    with db.connection_context():
        exchange_rates.refresh(settings, now=now)
        server.answer(ECB_PATH, 500, b"down")
        outcomes = [exchange_rates.refresh(settings, now=now)["ecb"] for _ in range(5)]
        assert outcomes == ["failed", "failed", "failed", "resting", "resting"]
        assert server.requests[ECB_PATH] == 4          # the resting source was not asked
        policy = exchange_rates.RatePolicy.of(settings)
        assert exchange_rates.usd_value("EUR", policy, now=now)[0] == Decimal("1.0842")   # still fresh
        with pytest.raises(Exception, match="exchange rate"):
            exchange_rates.usd_value("EUR", policy, now=now + dt.timedelta(days=4))        # never stale


def test_the_refresh_is_counted_by_source_and_outcome(client, operator_app, server):
    from infra import metrics
    from tests.support.prometheus import scrape

    server.answer(ER_API_PATH, 500, b"down")
    with db.connection_context():
        exchange_rates.refresh(settings_for(server, ("exchangerate_api",)), now=utcnow())
    metrics.flush()
    assert scrape(client)['tender_exchange_rate_refreshes_total{outcome="failed",source="exchangerate_api"}'] == 1


def test_start_up_says_in_one_line_when_a_real_provider_has_no_rate_source(caplog):
    import providers

    with caplog.at_level("WARNING", logger="tender.providers"):
        providers.warn_about_rates(dataclasses.replace(Settings(), swap_provider="oneclick", fx_providers=()))
        providers.warn_about_rates(dataclasses.replace(Settings(), swap_provider="oneclick", fx_providers=("ecb",)))
        providers.warn_about_rates(Settings())                                 # the sandbox's own rates
    assert [record.getMessage() for record in caplog.records] == [
        "FX_PROVIDER is unset: only USD invoices are supported (set FX_PROVIDER=ecb,exchangerate_api to price "
        "other currencies)"]
