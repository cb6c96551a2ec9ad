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
