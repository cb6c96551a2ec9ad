"""Swap providers behind one interface (providers/base.py). `get_provider(settings)` picks one."""
from __future__ import annotations


def get_provider(settings):
    """The configured provider: `sandbox` (default, DB-backed simulator) or `oneclick` (HTTP)."""
    if settings.swap_provider == "oneclick":
        # Imported here so that a sandbox deployment never needs the HTTP adapter loaded.
        from providers.oneclick import OneClickProvider

        return OneClickProvider(settings.oneclick_base_url, settings.oneclick_jwt)
    from providers.sandbox import SandboxProvider

    return SandboxProvider(latency_seconds=settings.sandbox_latency_ms / 1000)
