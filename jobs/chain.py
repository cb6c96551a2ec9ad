"""Queue `chain`: confirmation polling of invoices that have a deposit address, and of merchant refunds."""
from core.clock import utcnow
from jobs import ensure_runtime, measured, provider
from models.base import db
from services.engine import polling


@measured
def poll_deposits() -> int:
    """Claim the due invoices in batches and ask the provider about each; returns how many."""
    return _poll("chain")


@measured
def poll_refunds() -> int:
    """Claim the due merchant refunds and ask the provider about each one's funding and swap."""
    return _poll("refunds")


def _poll(phase: str) -> int:
    settings = ensure_runtime()
    with db.connection_context():
        return polling.poll_due(phase, provider(), clock=utcnow, base_seconds=settings.chain_poll_interval_seconds,
                                hot_seconds=settings.hot_poll_interval_seconds,
                                batch_size=settings.poll_batch_size, concurrency=settings.poll_concurrency,
                                lease_seconds=settings.poll_lease_seconds)
