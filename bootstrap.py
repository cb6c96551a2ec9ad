"""Start-up shared by every process (web, worker, scheduler, CLI): logging, the database, Redis
and URL settings. Called explicitly; nothing here runs at import."""
import json
import logging
import re
import time

import providers
from config import Settings
from core import urls
from infra import queues
from models.base import init_db, make_database
from services.engine import events
from services.mail import mail_outbox

# Defence in depth: whatever a log line says, a full key or secret never leaves the process.
_SECRETS = (
    (re.compile(r"sk_live_[0-9a-zA-Z]{8,}"), lambda m: f"sk_live_…{m.group(0)[-4:]}"),
    (re.compile(r"whsec_[0-9a-fA-F]{8,}"), lambda m: "whsec_…"),
)


def redact(text: str) -> str:
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


class JsonFormatter(logging.Formatter):
    """One JSON object per line, UTC; structured fields come from `extra={"fields": {...}}`."""

    converter = time.gmtime

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            **getattr(record, "fields", {}),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return redact(json.dumps(line, default=str))


def configure_logging(level: str) -> None:
    """JSON lines on stderr. Idempotent, and leaves handlers others installed (pytest's) alone."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler.formatter, JsonFormatter) or type(handler) is logging.StreamHandler:
            root.removeHandler(handler)
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    root.addHandler(handler)
    root.setLevel(level)


def init_runtime(settings: Settings) -> None:
    configure_logging(settings.log_level)
    init_db(make_database(settings.database_url, max_connections=settings.db_max_connections,
                          stale_timeout=settings.db_stale_timeout_seconds))
    queues.connect(settings.redis)
    urls.configure(settings.checkout_base_url)
    events.configure(livemode=settings.swap_provider != "sandbox")
    mail_outbox.configure(settings.mail_from)

    providers.warn_about_credentials(settings)
    providers.warn_about_rates(settings)
