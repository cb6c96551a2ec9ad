"""Plumbing every room shares: Redis and its breaker, queues and nudges, metrics, rate limits, health,
idempotency, row locks and claims, pagination."""
