"""config/: settings from the environment only; a bad value is a one-line error naming the variable."""
import os
import subprocess
import sys

import pytest

from config import ConfigError, load_settings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_defaults_need_nothing_set():
    settings = load_settings({})
    assert settings.database_url == "sqlite:///instance/tender.db"
    assert settings.redis_url is None and settings.embedded_redis
    assert settings.swap_provider == "sandbox"
    assert settings.invoice_ttl_seconds == 3600
    # The sandbox's rates price its starter table (docs/currencies.md).
    assert settings.fx_providers == ("sandbox",)
    assert settings.supported_currencies == ("USD", "EUR", "GBP", "CHF", "CAD", "AUD", "JPY", "SGD", "BRL", "MXN")
    assert (settings.operator_fee_bps, settings.operator_fee_account) == (0, None)
    assert settings.public_base_url == settings.checkout_base_url == "http://localhost:8000"
    assert settings.allow_private_webhook_urls is False


def test_good_values_are_read_and_normalised():
    settings = load_settings({
        "DATABASE_URL": "postgres://tender:pw@db.internal:5433/tender",
        "REDIS_URL": "redis://127.0.0.1:6379/3",
        "SWAP_PROVIDER": "OneClick",
        "INVOICE_TTL_SECONDS": "900",
        "SUPPORTED_CURRENCIES": " usd, eur ,GBP",
        "ALLOW_PRIVATE_WEBHOOK_URLS": "yes",
        "PUBLIC_BASE_URL": "https://pay.example.com/",
    })
    assert settings.database_url == "postgres://tender:pw@db.internal:5433/tender"
    assert settings.redis_url == "redis://127.0.0.1:6379/3" and not settings.embedded_redis
    assert settings.swap_provider == "oneclick"
    assert settings.invoice_ttl_seconds == 900
    assert settings.supported_currencies == ("USD", "EUR", "GBP")
    assert settings.allow_private_webhook_urls is True
    assert settings.public_base_url == "https://pay.example.com"
    assert settings.checkout_base_url == "https://pay.example.com"      # defaults to PUBLIC_BASE_URL


def test_a_real_provider_without_rate_sources_supports_only_the_dollar():
    assert load_settings({"SWAP_PROVIDER": "oneclick"}).supported_currencies == ("USD",)


def test_real_rate_sources_default_to_what_each_of_them_prices():
    settings = load_settings({"SWAP_PROVIDER": "oneclick", "FX_PROVIDER": " ECB, exchangerate_api"})
    assert settings.fx_providers == ("ecb", "exchangerate_api")
    assert "EUR" in settings.supported_currencies and "JPY" in settings.supported_currencies
    assert "KWD" not in settings.supported_currencies           # the ECB does not price it
    assert "KWD" in load_settings({"SWAP_PROVIDER": "oneclick",
                                   "FX_PROVIDER": "exchangerate_api"}).supported_currencies


@pytest.mark.parametrize("environ, variable", [
    ({"FX_PROVIDER": "yahoo"}, "FX_PROVIDER"), ({"FX_PROVIDER": "sandbox,ecb"}, "FX_PROVIDER"),
    ({"SWAP_PROVIDER": "oneclick", "FX_PROVIDER": "sandbox"}, "FX_PROVIDER"),
    ({"FX_MAX_AGE_SECONDS": "10"}, "FX_MAX_AGE_SECONDS"), ({"FX_MAX_DIVERGENCE_BPS": "0"}, "FX_MAX_DIVERGENCE_BPS"),
    ({"OPERATOR_FEE_BPS": "100"}, "OPERATOR_FEE_ACCOUNT"), ({"OPERATOR_FEE_BPS": "501"}, "OPERATOR_FEE_BPS"),
    ({"OPERATOR_FEE_BPS": "-1"}, "OPERATOR_FEE_BPS"),
    ({"OPERATOR_FEE_BPS": "100", "OPERATOR_FEE_ACCOUNT": "Fees.NEAR"}, "OPERATOR_FEE_ACCOUNT"),
    ({"OPERATOR_FEE_BPS": "100", "OPERATOR_FEE_ACCOUNT": "a..near"}, "OPERATOR_FEE_ACCOUNT"),
])
def test_bad_rate_and_fee_settings_name_the_variable(environ, variable):
    with pytest.raises(ConfigError, match=rf"^{variable}:"):
        load_settings(environ)


def test_a_fee_with_its_account():
    settings = load_settings({"OPERATOR_FEE_BPS": "100", "OPERATOR_FEE_ACCOUNT": "tender-fees.near"})
    assert (settings.operator_fee_bps, settings.operator_fee_account) == (100, "tender-fees.near")


@pytest.mark.parametrize("url", ["postgres://u@h/db", "postgresql://u:p@h:5432/db", "sqlite:///tmp/x.db",
                                 "sqlite:////abs/path.db"])
def test_accepted_database_urls(url):
    assert load_settings({"DATABASE_URL": url, "SWAP_PROVIDER": "sandbox"}).database_url == url


@pytest.mark.parametrize("url", ["postgres://u@h/db", "postgresql://u:p@h:5432/db"])
def test_postgresql_needs_an_explicit_swap_provider(url):
    with pytest.raises(ConfigError, match=r"^SWAP_PROVIDER: must be set"):
        load_settings({"DATABASE_URL": url})
    assert load_settings({}).swap_provider == "sandbox"            # only the embedded default defaults to it


@pytest.mark.parametrize("raw, expected", [("1", True), ("true", True), ("ON", True), ("0", False),
                                           ("false", False), ("no", False), ("", False)])
def test_boolean_spellings(raw, expected):
    assert load_settings({"ALLOW_PRIVATE_WEBHOOK_URLS": raw}).allow_private_webhook_urls is expected


BAD_VALUES = [
    ("DATABASE_URL", "mysql://u@h/db"), ("DATABASE_URL", "sqlite:///"), ("DATABASE_URL", "postgres://host"),
    ("DATABASE_URL", "postgres:///db"), ("DATABASE_URL", "tender.db"),
    ("REDIS_URL", "http://127.0.0.1:6379"), ("REDIS_URL", "127.0.0.1:6379"), ("REDIS_URL", "redis://"),
    ("SWAP_PROVIDER", "stripe"), ("SWAP_PROVIDER", "sandbox,oneclick"),
    ("INVOICE_TTL_SECONDS", "abc"), ("INVOICE_TTL_SECONDS", "-5"), ("INVOICE_TTL_SECONDS", "1.5"),
    ("INVOICE_TTL_SECONDS", "4"), ("INVOICE_TTL_SECONDS", "2592001"), ("INVOICE_TTL_SECONDS", "1h"),
    ("SUPPORTED_CURRENCIES", "US"), ("SUPPORTED_CURRENCIES", "USD,EURO"), ("SUPPORTED_CURRENCIES", ","),
    ("SUPPORTED_CURRENCIES", "USD;EUR"), ("SUPPORTED_CURRENCIES", "U5D"), ("SUPPORTED_CURRENCIES", "USD,XAU"),
    ("SUPPORTED_CURRENCIES", "ABC"),
    ("ALLOW_PRIVATE_WEBHOOK_URLS", "maybe"), ("ALLOW_PRIVATE_WEBHOOK_URLS", "2"),
    ("PUBLIC_BASE_URL", "ftp://pay.example.com"), ("PUBLIC_BASE_URL", "pay.example.com"),
    ("PUBLIC_BASE_URL", "http://"), ("CHECKOUT_BASE_URL", "javascript:alert(1)"),
]


@pytest.mark.parametrize("name, value", BAD_VALUES)
def test_bad_value_raises_one_line_naming_the_variable(name, value):
    with pytest.raises(ConfigError) as raised:
        load_settings({name: value})
    message = str(raised.value)
    assert message.startswith(f"{name}:")
    assert "\n" not in message


def test_a_password_in_a_bad_url_is_not_printed():
    with pytest.raises(ConfigError) as raised:
        load_settings({"DATABASE_URL": "mysql://tender:hunter2@db/tender"})
    assert "hunter2" not in str(raised.value)
    with pytest.raises(ConfigError) as raised:
        load_settings({"REDIS_URL": "http://:hunter3@cache:6379"})
    assert "hunter3" not in str(raised.value)


def run_wsgi_import(tmp_path, **env):
    base = {"PATH": os.environ.get("PATH", ""), "DATABASE_URL": f"sqlite:///{tmp_path}/t.db", "LOG_LEVEL": "ERROR"}
    return subprocess.run([sys.executable, "-c", "import wsgi"], cwd=ROOT, env={**base, **env},
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name, value", [
    ("DATABASE_URL", "mysql://u@h/db"), ("REDIS_URL", "http://127.0.0.1:6379"), ("SWAP_PROVIDER", "stripe"),
    ("INVOICE_TTL_SECONDS", "abc"), ("SUPPORTED_CURRENCIES", "US"), ("ALLOW_PRIVATE_WEBHOOK_URLS", "maybe"),
    ("PUBLIC_BASE_URL", "ftp://x"),
])
def test_start_up_with_a_bad_value_exits_with_one_line_naming_it(tmp_path, name, value):
    result = run_wsgi_import(tmp_path, **{name: value})
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert name in lines[0]
    assert "Traceback" not in result.stderr


def test_start_up_with_good_values_succeeds(tmp_path):
    result = run_wsgi_import(tmp_path)
    assert result.returncode == 0, result.stderr


def test_the_configuration_table_states_the_invoice_ttl_range_config_accepts():
    table = open(os.path.join(ROOT, "docs", "operations.md"), encoding="utf-8").read()
    row = next(line for line in table.splitlines() if line.startswith("| `INVOICE_TTL_SECONDS`"))
    assert "(5 s to 30 days)" in row
    for accepted in ("5", str(30 * 86400)):
        assert load_settings({"INVOICE_TTL_SECONDS": accepted}).invoice_ttl_seconds == int(accepted)
    for refused in ("4", str(30 * 86400 + 1)):
        with pytest.raises(ConfigError, match="INVOICE_TTL_SECONDS"):
            load_settings({"INVOICE_TTL_SECONDS": refused})


def test_an_empty_environment_gives_the_defaults_written_on_the_fields():
    """Each default is written once, on its Settings field; loading nothing must give exactly those."""
    from config import Settings
    assert load_settings({}) == Settings()


# PostgreSQL URLs are read by libpq itself: every parameter, and lists of hosts.

@pytest.mark.parametrize("url", [
    "postgresql://tender@db1:5432,db2:5432/tender?target_session_attrs=read-write",
    "postgresql://tender:p%40ss@db.internal/tender?sslmode=verify-full&application_name=tender-web&connect_timeout=3",
    "postgresql://tender@[::1]:6432/tender",
    "postgresql:///tender?host=/var/run/postgresql",
])
def test_postgresql_urls_libpq_reads_are_accepted_whole(url):
    assert load_settings({"DATABASE_URL": url, "SWAP_PROVIDER": "sandbox"}).database_url == url


@pytest.mark.parametrize("url", ["postgresql://u:secret@h/db?sslmode", "postgresql://u:secret@h:5432",
                                 "postgresql://u:secret@h/db?no_such_parameter=1", "postgresql://u:secret@h:port/db"])
def test_postgresql_urls_libpq_cannot_use_fail_at_start_up_without_showing_the_password(url):
    with pytest.raises(ConfigError, match=r"^DATABASE_URL: ") as error:
        load_settings({"DATABASE_URL": url, "SWAP_PROVIDER": "sandbox"})
    assert "secret" not in str(error.value)


def test_the_direct_database_url_is_optional_and_postgresql_only():
    base = {"DATABASE_URL": "postgresql://tender@127.0.0.1:6432/tender", "SWAP_PROVIDER": "sandbox"}
    assert load_settings(base).database_direct_url is None
    direct = "postgresql://tender@127.0.0.1:5432/tender"
    assert load_settings({**base, "DATABASE_DIRECT_URL": direct}).database_direct_url == direct
    with pytest.raises(ConfigError, match=r"^DATABASE_DIRECT_URL: must be a PostgreSQL URL"):
        load_settings({**base, "DATABASE_DIRECT_URL": "sqlite:///x.db"})
    with pytest.raises(ConfigError, match=r"^DATABASE_DIRECT_URL: "):
        load_settings({**base, "DATABASE_DIRECT_URL": "postgresql://h"})


# Redis: one URL, or Sentinel.

SENTINEL_ENV = {"REDIS_SENTINELS": "10.0.0.1:26379, 10.0.0.2:26379,[fd00::3]:26380", "REDIS_SENTINEL_MASTER": "tender"}


def test_sentinel_settings_are_read():
    from config import RedisSentinel

    settings = load_settings({**SENTINEL_ENV, "REDIS_DB": "2", "REDIS_PASSWORD": "pw", "REDIS_SENTINEL_PASSWORD": "spw"})
    assert settings.redis_url is None and not settings.embedded_redis
    assert settings.redis == settings.redis_sentinel == RedisSentinel(
        sentinels=(("10.0.0.1", 26379), ("10.0.0.2", 26379), ("fd00::3", 26380)), master="tender", db=2,
        password="pw", sentinel_password="spw")
    assert load_settings(SENTINEL_ENV).redis_sentinel.db == 0


@pytest.mark.parametrize("environ, message", [
    ({"REDIS_SENTINELS": "10.0.0.1:26379"}, r"^REDIS_SENTINEL_MASTER: must name the master"),
    ({**SENTINEL_ENV, "REDIS_SENTINEL_MASTER": "bad name"}, r"^REDIS_SENTINEL_MASTER: "),
    ({**SENTINEL_ENV, "REDIS_SENTINELS": "10.0.0.1"}, r"^REDIS_SENTINELS: must be comma-separated host:port"),
    ({**SENTINEL_ENV, "REDIS_SENTINELS": "10.0.0.1:0"}, r"^REDIS_SENTINELS: "),
    ({**SENTINEL_ENV, "REDIS_SENTINELS": "10.0.0.1:26379,,10.0.0.2:26379"}, r"^REDIS_SENTINELS: "),
    ({**SENTINEL_ENV, "REDIS_SENTINELS": "redis://10.0.0.1:26379"}, r"^REDIS_SENTINELS: "),
    ({**SENTINEL_ENV, "REDIS_DB": "x"}, r"^REDIS_DB: must be a whole number"),
    ({**SENTINEL_ENV, "REDIS_URL": "redis://127.0.0.1:6379/0"}, r"^REDIS_SENTINELS: set either REDIS_URL or"),
    ({"REDIS_URL": "redis://127.0.0.1:6379/0", "REDIS_DB": "3"}, r"^REDIS_DB: only used with REDIS_SENTINELS"),
    ({"REDIS_SENTINEL_MASTER": "tender"}, r"^REDIS_SENTINEL_MASTER: only used with REDIS_SENTINELS"),
    ({"REDIS_PASSWORD": "pw"}, r"^REDIS_PASSWORD: only used with REDIS_SENTINELS"),
])
def test_bad_redis_settings_fail_at_start_up(environ, message):
    with pytest.raises(ConfigError, match=message):
        load_settings(environ)


def test_every_rq_process_reads_the_same_redis_settings():
    from infra.rq_connection import dashboard_url, rq_settings

    assert rq_settings({"REDIS_URL": "redis://127.0.0.1:6379/4"}) == {"REDIS_URL": "redis://127.0.0.1:6379/4"}
    sentinel = rq_settings({**SENTINEL_ENV, "REDIS_DB": "2", "REDIS_PASSWORD": "pw", "REDIS_SENTINEL_PASSWORD": "spw"})
    assert sentinel["SENTINEL"]["INSTANCES"] == [("10.0.0.1", 26379), ("10.0.0.2", 26379), ("fd00::3", 26380)]
    assert (sentinel["SENTINEL"]["MASTER_NAME"], sentinel["SENTINEL"]["DB"], sentinel["SENTINEL"]["PASSWORD"]) == \
        ("tender", 2, "pw")
    assert sentinel["SENTINEL"]["SENTINEL_KWARGS"]["password"] == "spw"
    with pytest.raises(ConfigError, match=r"^REDIS_URL: rq processes need a Redis"):
        rq_settings({})
    assert dashboard_url({"REDIS_SENTINELS": "10.0.0.1:26379,10.0.0.2:26379", "REDIS_SENTINEL_MASTER": "tender",
                          "REDIS_DB": "2", "REDIS_PASSWORD": "pw"}) == \
        "redis+sentinel://10.0.0.1:26379,10.0.0.2:26379/tender/2"


def test_arriving_requests_are_bounded_per_client_unless_behind_trusted_proxies():
    assert load_settings({}).arriving_requests_per_client == 8
    assert load_settings({"TRUSTED_PROXY_HOPS": "1"}).arriving_requests_per_client == 0     # the proxy is everyone
    assert load_settings({"TRUSTED_PROXY_HOPS": "1", "ARRIVING_REQUESTS_PER_CLIENT": "50"}).arriving_requests_per_client == 50
    assert load_settings({"REQUEST_HEADER_TIMEOUT_SECONDS": "3"}).request_header_timeout_seconds == 3


def test_an_rq_process_refuses_to_start_on_a_setting_the_web_refuses():
    """`rq worker --config infra.rq_config` checks the whole configuration at start, in one line naming
    the variable, instead of starting and failing every job it takes."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {"PATH": os.environ.get("PATH", ""), "REDIS_URL": "redis://127.0.0.1:6379/0",
           "MAIL_TIMEOUT_SECONDS": "30", "MAIL_CLAIM_SECONDS": "40"}
    refused = subprocess.run([sys.executable, "-c", "import infra.rq_config"], cwd=root, env=env,
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "tender: configuration error: MAIL_CLAIM_SECONDS: must be more than twice MAIL_TIMEOUT_SECONDS (30), got 40"]

    env["MAIL_CLAIM_SECONDS"] = "61"
    accepted = subprocess.run([sys.executable, "-c", "import infra.rq_config as c; print(c.REDIS_URL)"], cwd=root,
                              env=env, capture_output=True, text=True, timeout=60)
    assert accepted.returncode == 0, accepted.stderr
    assert accepted.stdout.strip() == "redis://127.0.0.1:6379/0"
