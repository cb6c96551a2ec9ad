"""Queue `maintenance`: the expiry sweep and the idempotency-key purge (the outbox relay, jobs/webhooks.py,
runs on this queue too)."""
from core.clock import utcnow
from infra import idempotency
from jobs import ensure_runtime, measured, provider
from models.base import db
from services.engine import exchange_rates, expiry, refunds


@measured
def sweep_expired_invoices() -> int:
    settings = ensure_runtime()
    with db.connection_context():
        return expiry.expire_due(provider(), now=utcnow(), timeout_seconds=settings.expiry_provider_timeout_seconds)


@measured
def sweep_expired_refunds() -> int:
    """Unfunded merchant refunds past their funding deadline (docs/refunds.md)."""
    settings = ensure_runtime()
    with db.connection_context():
        return refunds.expire_due(provider(), now=utcnow(), timeout_seconds=settings.expiry_provider_timeout_seconds)


@measured
def purge_expired_idempotency_keys() -> int:
    """Idempotency keys are kept 24 hours (docs/api.md#idempotency); delete what is past that, in batches."""
    ensure_runtime()
    with db.connection_context():
        return idempotency.purge_expired(now=utcnow())


@measured
def refresh_exchange_rates() -> dict:
    """Ask the real rate sources for their tables (docs/currencies.md#rate-sources); buyers only read them."""
    settings = ensure_runtime()
    with db.connection_context():
        return exchange_rates.refresh(settings, now=utcnow())
