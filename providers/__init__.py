"""Swap providers behind one interface (providers/base.py).

`shared(settings)` is how every process obtains its provider: built once per process and reused
by every request and job, so the `oneclick` adapter keeps one HTTP session (kept-alive
connections) and one cached `/v0/tokens` table instead of building them per request.
`get_provider(settings)` builds a new one (tests, tools).
"""
from __future__ import annotations

import os
import threading

_shared = {"key": None, "provider": None}
_shared_lock = threading.Lock()


def get_provider(settings):
    """The configured provider: `sandbox` (default, DB-backed simulator) or `oneclick` (HTTP)."""
    if settings.swap_provider == "oneclick":
        # Imported here so that a sandbox deployment never needs the HTTP adapter loaded.
        from providers.oneclick import OneClickProvider

        return OneClickProvider(settings.oneclick_base_url, settings.oneclick_jwt)
    from providers.sandbox import SandboxProvider

    return SandboxProvider(latency_seconds=settings.sandbox_latency_ms / 1000)


def shared(settings):
    """This process's provider for `settings`, built on first use. Keyed by the process id too, so
    a forked child never shares its parent's HTTP connections; new settings build a new one."""
    key = (os.getpid(), settings)
    with _shared_lock:
        if _shared["key"] != key:
            _shared["provider"], _shared["key"] = get_provider(settings), key
        return _shared["provider"]
