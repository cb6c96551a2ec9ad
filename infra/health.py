"""What /health reports: the database decides up or down; Redis only degrades (docs/operations.md)."""
import logging

from infra import provider_health, queues
from models.base import db

log = logging.getLogger("tender.health")


def _probe(check) -> str:
    try:
        check()
        return "ok"
    except Exception as error:  # any failure means "unavailable"; the reason goes to the log
        log.warning("health probe failed: %s", error)
        return "unavailable"


def check(extra: dict | None = None) -> dict:
    """The components' states; `extra` adds those the domain decides (exchange rates)."""
    components = {
        "database": _probe(lambda: db.execute_sql("SELECT 1").fetchone()),
        "redis": _probe(lambda: queues.redis().ping()),
    }
    # A 401/403 from the swap provider (an operator must fix the credentials); unknown without Redis.
    components["provider"] = provider_health.status() if components["redis"] == "ok" else "unknown"
    components.update(extra or {})
    status = "ok" if all(value == "ok" for value in components.values()) else "degraded"
    return {"status": status, "components": components}
