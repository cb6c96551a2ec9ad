"""Start-up shared by every process (web, worker, scheduler, CLI): attach the database, Redis
and URL settings. Called explicitly; nothing here runs at import."""
import logging

from config import Settings
from models.base import init_db, make_database
from services import queues, urls


def init_runtime(settings: Settings) -> None:
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    init_db(make_database(settings.database_url, max_connections=settings.db_max_connections,
                          stale_timeout=settings.db_stale_timeout_seconds))
    queues.connect(settings.redis_url)
    urls.configure(settings.checkout_base_url)
