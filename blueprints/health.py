from flask import Blueprint, jsonify

from blueprints.context import settings
from core.clock import utcnow
from infra import health
from services.engine import exchange_rates

bp = Blueprint("health", __name__)


@bp.get("/health")
def get_health():
    report = health.check({"exchange_rates": _exchange_rates()})
    return jsonify(report), 200 if report["components"]["database"] == "ok" else 503


def _exchange_rates() -> str:
    config = settings()
    try:
        return exchange_rates.health(config.supported_currencies, exchange_rates.RatePolicy.of(config), now=utcnow())
    except Exception:       # the database is down: its own component says so
        return "unknown"
