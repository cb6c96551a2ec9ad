"""Settings from the environment only (12-factor), validated once at start-up.

`load_settings(os.environ)` returns a frozen `Settings`; a bad value raises `ConfigError`
whose message is one line naming the variable, so start-up fails loudly and clearly.
"""
from __future__ import annotations

from dataclasses import dataclass
import re

from core import currencies
from config.env import ConfigError, Env
from config.mail import SmtpServer, mail_settings


@dataclass(frozen=True)
class RedisSentinel:
    """Redis behind Sentinel (docs/operations.md#more-than-one-machine): the Sentinels to ask, the name
    they monitor, and the database number and passwords of the Redis they point at."""
    sentinels: tuple[tuple[str, int], ...]
    master: str
    db: int = 0
    password: str | None = None             # the Redis servers' (requirepass)
    sentinel_password: str | None = None    # the Sentinels' own, when they have one


DEFAULT_DATABASE_URL = "sqlite:///instance/tender.db"
DEFAULT_PUBLIC_BASE_URL = "http://localhost:8000"
SWAP_PROVIDERS = ("sandbox", "oneclick")
FX_PROVIDERS = ("sandbox", "ecb", "exchangerate_api")       # rate sources (docs/currencies.md)
# A NEAR account id (docs.near.org: 2-64 characters, lower-case parts joined by - _ and dots).
_NEAR_ACCOUNT = re.compile(r"(?=.{2,64}\Z)(([a-z\d]+[-_])*[a-z\d]+\.)*([a-z\d]+[-_])*[a-z\d]+\Z")
RATE_LIMIT_MODES = ("enforce", "observe", "off")
_PER_MINUTE = {"minimum": 1, "maximum": 1_000_000}


@dataclass(frozen=True)
class Settings:
    database_url: str = DEFAULT_DATABASE_URL
    database_direct_url: str | None = None      # `flask db upgrade` connects here when the app goes through PgBouncer
    redis_url: str | None = None                # None (and no redis_sentinel): embedded in-process fakeredis
    redis_sentinel: RedisSentinel | None = None
    swap_provider: str = "sandbox"
    oneclick_base_url: str = "https://1click.chaindefuser.com"
    oneclick_jwt: str | None = None
    oneclick_api_key: str | None = None
    invoice_ttl_seconds: int = 3600
    supported_currencies: tuple[str, ...] = currencies.SANDBOX_STARTER   # default: what the rate sources price
    # Rates (docs/currencies.md): the sources in order of preference, how old a rate may be (None:
    # each source's own default), how far two sources may disagree, and where the real ones are.
    fx_providers: tuple[str, ...] = ("sandbox",)     # with SWAP_PROVIDER=oneclick: none unless set
    fx_max_age_seconds: int | None = None
    fx_max_divergence_bps: int = 100
    fx_ecb_url: str = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"
    fx_exchangerate_api_url: str = "https://open.er-api.com/v6/latest/USD"
    operator_fee_bps: int = 0                   # the operator's fee (docs/operations.md#the-operators-fee)
    operator_fee_account: str | None = None
    public_base_url: str = DEFAULT_PUBLIC_BASE_URL
    checkout_base_url: str = DEFAULT_PUBLIC_BASE_URL
    allow_private_webhook_urls: bool = False
    operator_username: str | None = None
    operator_password: str | None = None
    secret_key: str | None = None               # signs the dashboard's CSRF tokens (default: one kept in Redis)
    db_max_connections: int = 20
    db_stale_timeout_seconds: int = 300
    log_level: str = "INFO"
    # Rate limits (docs/api.md#rate-limits): a mode per family, a number per bucket, per minute.
    rate_limit_write_mode: str = "enforce"
    rate_limit_read_mode: str = "observe"
    rate_limit_public_mode: str = "enforce"
    rate_limit_write_per_minute: int = 120
    rate_limit_read_per_minute: int = 600
    # Checkout of one link: per client (10) so one caller cannot spend it for everyone, and a
    # higher ceiling for the link as a whole (300).
    rate_limit_public_checkout_per_client: int = 10
    rate_limit_public_checkout_per_token: int = 300
    rate_limit_public_checkout_per_ip: int = 30
    rate_limit_public_reads_per_ip: int = 120
    trusted_proxy_hops: int = 0      # X-Forwarded-For hops to trust (docs/api.md#rate-limits)
    request_body_timeout_seconds: int = 10      # a body still arriving after this is 408 (blueprints/request_reading.py)
    request_header_timeout_seconds: int = 10    # headers still arriving after this: 408 (blueprints/request_reading.py)
    # Requests one client (an IPv4 address, an IPv6 /64) may have still arriving (headers or body) in
    # one web process; 0: no bound (the default behind trusted proxies, whose address every client shares).
    arriving_requests_per_client: int = 8
    # Webhooks (docs/webhooks.md): retry delays after each failed attempt, the per-attempt timeout,
    # how long a claimed delivery stays reserved, and how many are sent at once per worker.
    webhook_retry_schedule: tuple[int, ...] = (60, 300, 1800, 7200, 21600, 43200, 86400, 86400)
    webhook_timeout_seconds: int = 10
    webhook_claim_seconds: int = 60
    webhook_concurrency: int = 32
    webhook_max_in_flight_per_endpoint: int = 4
    # Payment engine (docs/payment-engine.md): how often the scheduler ticks each sweep, how many
    # invoices one job claims at a time, and how many it polls at once.
    chain_poll_interval_seconds: int = 10
    hot_poll_interval_seconds: int = 2          # invoices with money in flight or a buyer paying now
    settlement_poll_interval_seconds: int = 10
    expiry_sweep_interval_seconds: int = 30
    poll_batch_size: int = 200
    poll_concurrency: int = 8
    poll_lease_seconds: int = 5                # a poller's claim, renewed while it polls; a dead worker's lapses
    quote_min_remaining_seconds: int = 120      # a deposit address needs this long left to be paid
    expiry_provider_timeout_seconds: int = 3    # the expiry sweep and cancel wait this long for the provider
    sandbox_latency_ms: int = 0                 # the sandbox answers status reads this slowly (tests, bench)
    embedded_jobs: bool = True                  # with the embedded Redis, run jobs in the web process
    # Mail (docs/email.md): no SMTP server means mail is written to the log and kept.
    smtp: SmtpServer | None = None              # config/mail.py reads SMTP_URL
    mail_from: str = "Tender <tender@localhost>"
    mail_timeout_seconds: int = 30              # a hard deadline on one whole SMTP exchange
    mail_claim_seconds: int = 120               # a sender's lease on a mail; a dead worker's lapses
    mail_retry_schedule: tuple[int, ...] = (60, 300, 1800, 7200, 21600)

    @property
    def redis(self) -> str | RedisSentinel | None:
        """Where Redis is: a URL, the Sentinels that know, or None for the embedded fakeredis."""
        return self.redis_url or self.redis_sentinel

    @property
    def embedded_redis(self) -> bool:
        return self.redis is None

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite:")


def load_settings(environ) -> Settings:
    env = Env(environ)
    default = Settings()            # each default is written once, on the field
    public_base_url = env.url("PUBLIC_BASE_URL", default.public_base_url)
    return Settings(
        database_url=env.database_url("DATABASE_URL", default.database_url),
        database_direct_url=_database_direct_url(env),
        **load_redis(environ),
        swap_provider=_swap_provider(env),
        oneclick_base_url=env.url("ONECLICK_BASE_URL", default.oneclick_base_url),
        oneclick_jwt=env.text("ONECLICK_JWT"),
        oneclick_api_key=env.text("ONECLICK_API_KEY"),
        # Minimum 5 s (not 60): the multi-process tests and demos watch a real expiry happen.
        invoice_ttl_seconds=env.integer("INVOICE_TTL_SECONDS",
                                        default.invoice_ttl_seconds, minimum=5, maximum=30 * 86400),
        **_money_settings(env, default),
        public_base_url=public_base_url,
        checkout_base_url=env.url("CHECKOUT_BASE_URL", public_base_url),     # the public one, as configured
        allow_private_webhook_urls=env.boolean("ALLOW_PRIVATE_WEBHOOK_URLS", default.allow_private_webhook_urls),
        operator_username=env.text("OPERATOR_USERNAME"),
        operator_password=env.text("OPERATOR_PASSWORD"),
        secret_key=env.text("SECRET_KEY"),
        db_max_connections=env.integer("DB_MAX_CONNECTIONS", default.db_max_connections, minimum=1, maximum=1000),
        db_stale_timeout_seconds=env.integer("DB_STALE_TIMEOUT_SECONDS",
                                             default.db_stale_timeout_seconds, minimum=1, maximum=86400),
        log_level=env.choice("LOG_LEVEL", ("DEBUG", "INFO", "WARNING", "ERROR"), default.log_level, upper=True),
        **_http_edge_settings(env, default),
        **_webhook_settings(env, default),
        **_engine_settings(env, default),
        **mail_settings(env, default),
    )


def _http_edge_settings(env, default: Settings) -> dict:
    """Rate limits, the trusted proxies and how long a request may take to arrive (docs/api.md#rate-limits)."""
    return {
        "rate_limit_write_mode": env.choice("RATE_LIMIT_WRITE_MODE", RATE_LIMIT_MODES, default.rate_limit_write_mode),
        "rate_limit_read_mode": env.choice("RATE_LIMIT_READ_MODE", RATE_LIMIT_MODES, default.rate_limit_read_mode),
        "rate_limit_public_mode": env.choice("RATE_LIMIT_PUBLIC_MODE", RATE_LIMIT_MODES, default.rate_limit_public_mode),
        "rate_limit_write_per_minute": env.integer("RATE_LIMIT_WRITE_PER_MINUTE",
                                                   default.rate_limit_write_per_minute, **_PER_MINUTE),
        "rate_limit_read_per_minute": env.integer("RATE_LIMIT_READ_PER_MINUTE",
                                                  default.rate_limit_read_per_minute, **_PER_MINUTE),
        "rate_limit_public_checkout_per_client": env.integer("RATE_LIMIT_PUBLIC_CHECKOUT_PER_CLIENT",
                                                             default.rate_limit_public_checkout_per_client, **_PER_MINUTE),
        "rate_limit_public_checkout_per_token": env.integer("RATE_LIMIT_PUBLIC_CHECKOUT_PER_TOKEN",
                                                            default.rate_limit_public_checkout_per_token, **_PER_MINUTE),
        "rate_limit_public_checkout_per_ip": env.integer("RATE_LIMIT_PUBLIC_CHECKOUT_PER_IP",
                                                         default.rate_limit_public_checkout_per_ip, **_PER_MINUTE),
        "rate_limit_public_reads_per_ip": env.integer("RATE_LIMIT_PUBLIC_READS_PER_IP",
                                                      default.rate_limit_public_reads_per_ip, **_PER_MINUTE),
        "trusted_proxy_hops": env.integer("TRUSTED_PROXY_HOPS", default.trusted_proxy_hops, minimum=0, maximum=10),
        "request_body_timeout_seconds": env.integer("REQUEST_BODY_TIMEOUT_SECONDS", default.request_body_timeout_seconds,
                                                    minimum=1, maximum=300),
        "request_header_timeout_seconds": env.integer("REQUEST_HEADER_TIMEOUT_SECONDS",
                                                      default.request_header_timeout_seconds, minimum=1, maximum=300),
        "arriving_requests_per_client": env.integer(
            "ARRIVING_REQUESTS_PER_CLIENT",
            0 if env.integer("TRUSTED_PROXY_HOPS", 0, minimum=0, maximum=10) else default.arriving_requests_per_client,
            minimum=0, maximum=100_000),
    }


def _engine_settings(env, default: Settings) -> dict:
    """The payment engine's sweeps, batches and leases (docs/payment-engine.md)."""
    return {
        "chain_poll_interval_seconds": env.integer("CHAIN_POLL_INTERVAL_SECONDS",
                                                   default.chain_poll_interval_seconds, minimum=1, maximum=3600),
        "hot_poll_interval_seconds": env.integer("HOT_POLL_INTERVAL_SECONDS",
                                                 default.hot_poll_interval_seconds, minimum=1, maximum=3600),
        "settlement_poll_interval_seconds": env.integer("SETTLEMENT_POLL_INTERVAL_SECONDS",
                                                        default.settlement_poll_interval_seconds, minimum=1, maximum=3600),
        "expiry_sweep_interval_seconds": env.integer("EXPIRY_SWEEP_INTERVAL_SECONDS",
                                                     default.expiry_sweep_interval_seconds, minimum=1, maximum=3600),
        "poll_batch_size": env.integer("POLL_BATCH_SIZE", default.poll_batch_size, minimum=1, maximum=10000),
        "poll_concurrency": env.integer("POLL_CONCURRENCY", default.poll_concurrency, minimum=1, maximum=64),
        "poll_lease_seconds": env.integer("POLL_LEASE_SECONDS", default.poll_lease_seconds, minimum=2, maximum=3600),
        "quote_min_remaining_seconds": env.integer("QUOTE_MIN_REMAINING_SECONDS",
                                                   default.quote_min_remaining_seconds, minimum=0, maximum=86400),
        "expiry_provider_timeout_seconds": env.integer("EXPIRY_PROVIDER_TIMEOUT_SECONDS",
                                                       default.expiry_provider_timeout_seconds, minimum=1, maximum=60),
        "sandbox_latency_ms": env.integer("SANDBOX_LATENCY_MS", default.sandbox_latency_ms, minimum=0, maximum=60000),
        "embedded_jobs": env.boolean("EMBEDDED_JOBS", default.embedded_jobs),
    }


def _swap_provider(env) -> str:
    """The sandbox is the default only on the embedded SQLite database: a PostgreSQL deployment that
    forgot the variable must not hand buyers a "Simulate payment" button (docs/payment-engine.md)."""
    database_url = env.text("DATABASE_URL", DEFAULT_DATABASE_URL)
    if env.text("SWAP_PROVIDER") is None and database_url.startswith(("postgres:", "postgresql:")):
        raise ConfigError("SWAP_PROVIDER: must be set (sandbox or oneclick) when DATABASE_URL is PostgreSQL")
    return env.choice("SWAP_PROVIDER", SWAP_PROVIDERS, Settings.swap_provider)


def _money_settings(env, default: Settings) -> dict:
    """Currencies, their rate sources and the operator's fee (docs/currencies.md, docs/operations.md)."""
    swap_provider = _swap_provider(env)
    raw = env.text("FX_PROVIDER", "sandbox" if swap_provider == "sandbox" else "")
    sources = tuple(dict.fromkeys(name.strip().lower() for name in raw.split(",") if name.strip()))
    if any(name not in FX_PROVIDERS for name in sources):
        raise ConfigError(f"FX_PROVIDER: must be comma-separated names from {', '.join(FX_PROVIDERS)} (got {raw!r})")
    if "sandbox" in sources and (swap_provider != "sandbox" or len(sources) > 1):
        raise ConfigError("FX_PROVIDER: sandbox (the operator's own rates) only with SWAP_PROVIDER=sandbox, alone")
    fee_bps = env.integer("OPERATOR_FEE_BPS", default.operator_fee_bps, minimum=0, maximum=500)
    fee_account = env.text("OPERATOR_FEE_ACCOUNT")
    if fee_account is not None and not _NEAR_ACCOUNT.match(fee_account):
        raise ConfigError(f"OPERATOR_FEE_ACCOUNT: must be a NEAR account id such as fees.near (got {fee_account!r})")
    if fee_bps and fee_account is None:
        raise ConfigError("OPERATOR_FEE_ACCOUNT: must be set (a NEAR Intents account id) when OPERATOR_FEE_BPS is not 0")
    return {
        "supported_currencies": env.currencies("SUPPORTED_CURRENCIES", currencies.priced_by(sources)),
        "fx_providers": sources,
        "fx_max_age_seconds": env.integer("FX_MAX_AGE_SECONDS", None, minimum=60, maximum=30 * 86400),
        "fx_max_divergence_bps": env.integer("FX_MAX_DIVERGENCE_BPS", default.fx_max_divergence_bps,
                                             minimum=1, maximum=10000),
        "fx_ecb_url": env.url("FX_ECB_URL", default.fx_ecb_url),
        "fx_exchangerate_api_url": env.url("FX_EXCHANGERATE_API_URL", default.fx_exchangerate_api_url),
        "operator_fee_bps": fee_bps, "operator_fee_account": fee_account,
    }


def _database_direct_url(env) -> str | None:
    if env.text("DATABASE_DIRECT_URL") is None:
        return None
    url = env.database_url("DATABASE_DIRECT_URL", None)
    if url.startswith("sqlite:"):
        raise ConfigError("DATABASE_DIRECT_URL: must be a PostgreSQL URL (it bypasses PgBouncer)")
    return url


_REDIS_SENTINEL_ONLY = ("REDIS_SENTINEL_MASTER", "REDIS_DB", "REDIS_PASSWORD", "REDIS_SENTINEL_PASSWORD")


def load_redis(environ) -> dict:
    """The Redis settings alone, `{"redis_url": …, "redis_sentinel": …}`: for `load_settings` and for
    the rq processes' settings (infra/rq_connection.py), which read the same variables.

    One way or the other: REDIS_URL for a single server, or REDIS_SENTINELS with
    REDIS_SENTINEL_MASTER (and REDIS_DB, REDIS_PASSWORD, REDIS_SENTINEL_PASSWORD) for Sentinel;
    a variable of one way set beside the other way is an error, not silently ignored."""
    env = Env(environ)
    redis_url = env.redis_url("REDIS_URL")
    sentinels = env.text("REDIS_SENTINELS")
    if sentinels is None:
        stray = [name for name in _REDIS_SENTINEL_ONLY if env.text(name) is not None]
        if stray:
            raise ConfigError(f"{stray[0]}: only used with REDIS_SENTINELS, which is not set"
                              + (" (REDIS_URL carries its own database and password)" if redis_url else ""))
        return {"redis_url": redis_url, "redis_sentinel": None}
    if redis_url is not None:
        raise ConfigError("REDIS_SENTINELS: set either REDIS_URL or REDIS_SENTINELS, not both")
    master = env.text("REDIS_SENTINEL_MASTER")
    if master is None or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", master):
        raise ConfigError(f"REDIS_SENTINEL_MASTER: must name the master the Sentinels monitor (letters, digits, . _ -) "
                          f"when REDIS_SENTINELS is set (got {master!r})")
    return {"redis_url": None, "redis_sentinel": RedisSentinel(
        sentinels=env.host_ports("REDIS_SENTINELS", sentinels),
        master=master,
        db=env.integer("REDIS_DB", 0, minimum=0, maximum=1023),
        password=env.text("REDIS_PASSWORD"),
        sentinel_password=env.text("REDIS_SENTINEL_PASSWORD"),
    )}


def _webhook_settings(env, default: Settings) -> dict:
    timeout = env.integer("WEBHOOK_TIMEOUT_SECONDS", default.webhook_timeout_seconds, minimum=1, maximum=60)
    claim = env.integer("WEBHOOK_CLAIM_SECONDS", default.webhook_claim_seconds, minimum=2, maximum=3600)
    if claim <= 2 * timeout:
        # A claim shorter than an attempt would let a second worker send the same delivery at once.
        raise ConfigError(f"WEBHOOK_CLAIM_SECONDS: must be more than twice WEBHOOK_TIMEOUT_SECONDS ({timeout}), got {claim}")
    return {
        "webhook_retry_schedule": env.seconds_list("WEBHOOK_RETRY_SCHEDULE", default.webhook_retry_schedule),
        "webhook_timeout_seconds": timeout,
        "webhook_claim_seconds": claim,
        "webhook_concurrency": env.integer("WEBHOOK_CONCURRENCY", default.webhook_concurrency, minimum=1, maximum=256),
        "webhook_max_in_flight_per_endpoint": env.integer("WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT",
                                                          default.webhook_max_in_flight_per_endpoint,
                                                          minimum=1, maximum=256),
    }
