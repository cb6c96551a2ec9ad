"""The settings module every rq process reads (Procfile: `rq worker --config infra.rq_config …`; the
scheduler's `rq cron` likewise): rq takes the UPPERCASE names of this module, here the Redis
connection built by infra/rq_connection.py from the environment (REDIS_URL or REDIS_SENTINELS).

The whole configuration is checked here too, as `wsgi.py` checks it for the web: a worker started
with a setting the web refuses would otherwise start, then fail every job it takes."""
import os
import sys

from config import ConfigError, load_settings
from infra.rq_connection import rq_settings

try:
    load_settings(os.environ)
    globals().update(rq_settings(os.environ))
except ConfigError as error:
    sys.stderr.write(f"tender: configuration error: {error}\n")
    raise SystemExit(2) from None
