"""Queue `chain`: confirmation polling of invoices that have a deposit address."""
from core.clock import utcnow
from jobs import ensure_runtime, measured, provider
from models.base import db
from services.engine import polling


@measured
def poll_deposits() -> int:
    """Claim the due invoices in batches and ask the provider about each; returns how many."""
    settings = ensure_runtime()
    with db.connection_context():
        return polling.poll_due("chain", provider(), clock=utcnow, base_seconds=settings.chain_poll_interval_seconds,
                                hot_seconds=settings.hot_poll_interval_seconds,
                                batch_size=settings.poll_batch_size, concurrency=settings.poll_concurrency,
                                lease_seconds=settings.poll_lease_seconds)
