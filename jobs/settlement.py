"""Queue `settlement`: follows paid invoices' conversion to SUCCESS and records the payout."""
from core.clock import utcnow
from jobs import ensure_runtime, measured, provider
from models.base import db
from services.engine import polling


@measured
def poll_settlements() -> int:
    settings = ensure_runtime()
    with db.connection_context():
        return polling.poll_due("settlement", provider(), clock=utcnow,
                                base_seconds=settings.settlement_poll_interval_seconds,
                                hot_seconds=settings.hot_poll_interval_seconds,
                                batch_size=settings.poll_batch_size, concurrency=settings.poll_concurrency,
                                lease_seconds=settings.poll_lease_seconds)
