"""Queue `maintenance`: the expiry sweep (and, from other areas, the outbox relay and clean-ups)."""
from jobs import ensure_runtime, provider
from models.base import db
from services import expiry
from services.clock import utcnow


def sweep_expired_invoices() -> int:
    ensure_runtime()
    with db.connection_context():
        return expiry.expire_due(provider(), now=utcnow())
