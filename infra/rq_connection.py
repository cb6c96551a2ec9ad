"""The Redis connection of every rq process, as rq's settings (infra/rq_config.py hands them to rq)
and as rq-dashboard's URL (bin/queue-dashboard): from the same variables as the app's own client
(config.load_redis), so one Procfile serves a single Redis (REDIS_URL) and Redis behind Sentinel
(REDIS_SENTINELS, REDIS_SENTINEL_MASTER, …).

rq's Sentinel connection asks the Sentinels for the master on every new connection, and turns a
write refused by a demoted master into a ConnectionError, on which `rq worker` waits a second and
reconnects (infra/rq_worker.py); `rq cron` instead exits, and scheduler/supervise.py starts it again.

No command retries here: redis-py retries a failed command on the same connection to the same
address, so after a failover it kept knocking at the dead primary for all its retries (measured: a
worker stalled 16 s with 15 s of retries, against 2 s without, the primary killed under it).
"""
import os

from config import ConfigError, load_redis

SENTINEL_TIMEOUT_SECONDS = 1.0      # asking one Sentinel; a dead one costs this, then the next is asked
CONNECT_TIMEOUT_SECONDS = 2.0       # connecting to the master (rq sets the read timeout from its own waits)


def rq_settings(environ) -> dict:
    """The UPPERCASE settings `rq … --config` reads: REDIS_URL, or SENTINEL."""
    redis = load_redis(environ)
    if redis["redis_url"] is not None:
        return {"REDIS_URL": redis["redis_url"]}
    sentinel = redis["redis_sentinel"]
    if sentinel is None:
        raise ConfigError("REDIS_URL: rq processes need a Redis: set REDIS_URL, or REDIS_SENTINELS and "
                          "REDIS_SENTINEL_MASTER (the embedded default runs its jobs inside the web process)")
    return {"SENTINEL": {
        "INSTANCES": list(sentinel.sentinels),
        "MASTER_NAME": sentinel.master,
        "DB": sentinel.db,
        "PASSWORD": sentinel.password,
        "CONNECTION_KWARGS": {"socket_connect_timeout": CONNECT_TIMEOUT_SECONDS},
        "SENTINEL_KWARGS": {"socket_timeout": SENTINEL_TIMEOUT_SECONDS,
                            "socket_connect_timeout": SENTINEL_TIMEOUT_SECONDS,
                            "password": sentinel.sentinel_password},
    }}


def dashboard_url(environ) -> str:
    """The same Redis as rq-dashboard takes it: the redis:// URL, or `redis+sentinel://h1:p1,h2:p2/master/db`
    (passwords go to rq-dashboard in its own variables, bin/queue-dashboard)."""
    settings = rq_settings(environ)
    if "REDIS_URL" in settings:
        return settings["REDIS_URL"]
    sentinel = settings["SENTINEL"]
    hosts = ",".join(f"{host}:{port}" for host, port in sentinel["INSTANCES"])
    return f"redis+sentinel://{hosts}/{sentinel['MASTER_NAME']}/{sentinel['DB']}"


if __name__ == "__main__":          # bin/queue-dashboard: print the URL for rq-dashboard
    try:
        print(dashboard_url(os.environ))
    except ConfigError as error:
        raise SystemExit(f"queue-dashboard: {error}") from None
