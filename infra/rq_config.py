"""The settings module every rq process reads (Procfile: `rq worker --config infra.rq_config …`; the
scheduler's `rq cron` likewise): rq takes the UPPERCASE names of this module, here the Redis
connection built by infra/rq_connection.py from the environment (REDIS_URL or REDIS_SENTINELS)."""
import os

from infra.rq_connection import rq_settings

globals().update(rq_settings(os.environ))
