"""Swap providers behind one interface (providers/base.py).

`shared(settings)` is how every process obtains its provider: built once per process and reused
by every request and job, so the `oneclick` adapter keeps one HTTP session (kept-alive
connections) and one cached `/v0/tokens` table instead of building them per request.
`get_provider(settings)` builds a new one (tests, tools).
"""
from __future__ import annotations

import logging
import os
import threading

log = logging.getLogger("tender.providers")

_shared = {"key": None, "provider": None}
_shared_lock = threading.Lock()


def get_provider(settings):
    """The configured provider: `sandbox` (default, DB-backed simulator) or `oneclick` (HTTP)."""
    if settings.swap_provider == "oneclick":
        # Imported here so that a sandbox deployment never needs the HTTP adapter loaded.
        from providers.oneclick import OneClickProvider
        from infra import provider_health

        return OneClickProvider(settings.oneclick_base_url, settings.oneclick_jwt, api_key=settings.oneclick_api_key,
                                on_auth_failure=provider_health.auth_failed,
                                on_unreachable=provider_health.unreachable, on_answer=provider_health.answered)
    from providers.sandbox import SandboxProvider, SlowSandboxProvider

    if settings.sandbox_latency_ms:
        return SlowSandboxProvider(latency_seconds=settings.sandbox_latency_ms / 1000)
    return SandboxProvider()


def shared(settings):
    """This process's provider for `settings`, built on first use. Keyed by the process id too, so
    a forked child never shares its parent's HTTP connections; new settings build a new one."""
    key = (os.getpid(), settings)
    with _shared_lock:
        if _shared["key"] != key:
            _shared["provider"], _shared["key"] = get_provider(settings), key
        return _shared["provider"]


def warn_about_rates(settings) -> None:
    """Start-up: a real provider without rate sources prices only the dollar, at par (docs/currencies.md)."""
    if settings.swap_provider != "sandbox" and not settings.fx_providers:
        log.warning("FX_PROVIDER is unset: only USD invoices are supported (set FX_PROVIDER=ecb,exchangerate_api "
                    "to price other currencies)")


def warn_about_credentials(settings) -> None:
    """Start-up: 1Click serves requests without credentials, but charges 0.2% more on every swap."""
    if settings.swap_provider == "oneclick" and not (settings.oneclick_api_key or settings.oneclick_jwt):
        log.warning("SWAP_PROVIDER=oneclick without ONECLICK_API_KEY or ONECLICK_JWT: "
                    "1Click charges 0.2% more on every swap without credentials")
