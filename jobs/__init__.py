"""RQ job entry points, one module per queue (webhooks, chain, settlement, maintenance).

Jobs take ids and primitives only, borrow a database connection per job, and call services.
`ensure_runtime()` attaches the database and Redis once per worker process (after the fork).
"""
import os

from bootstrap import init_runtime
from config import load_settings

_state = {"settings": None}


def ensure_runtime():
    """The process's settings, initialising the runtime on first use (worker processes)."""
    if _state["settings"] is None:
        settings = load_settings(os.environ)
        init_runtime(settings)
        _state["settings"] = settings
    return _state["settings"]


def use_runtime(settings) -> None:
    """Adopt an already-initialised runtime (the web process's embedded worker, tests)."""
    _state["settings"] = settings
    _providers.clear()


_providers = []   # [(settings, provider)]: Settings holds a dict, so it cannot be a dict key


def provider():
    """This process's swap provider (one HTTP session per process for `oneclick`)."""
    settings = ensure_runtime()
    if not _providers or _providers[0][0] is not settings:
        from providers import get_provider

        _providers[:] = [(settings, get_provider(settings))]
    return _providers[0][1]
