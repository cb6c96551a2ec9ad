"""Starting the Procfile's processes on the real stack (TEST_DATABASE_URL, TEST_REDIS_URL) and
stopping them again, by PID: shared by the tests that start processes, and by bench/."""
from __future__ import annotations

from contextlib import contextmanager
import os
from pathlib import Path
import shlex
import signal
import socket
import subprocess
import sys

import requests

from tests.support.polling import free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DATABASE_URL = os.environ.get("TEST_DATABASE_URL")
REDIS_URL = os.environ.get("TEST_REDIS_URL")


def real_stack_env(**extra) -> dict:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("TEST_", "PYTEST"))}
    env.update({"DATABASE_URL": DATABASE_URL, "REDIS_URL": REDIS_URL, "PYTHONPATH": str(ROOT),
                "LOG_LEVEL": "WARNING", "EMBEDDED_JOBS": "0", "SWAP_PROVIDER": "sandbox",
                "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"})
    env.update(extra)
    return env


def observer_redis():
    """A plain Redis client for a test to watch the real stack with: ordinary timeouts and no circuit
    breaker (the app's client gives up after 0.25 s), so a slow moment of a loaded machine is waited
    out instead of failing the observation."""
    import redis

    return redis.Redis.from_url(REDIS_URL, socket_timeout=10, socket_connect_timeout=10)


def procfile_command(name: str) -> list[str]:
    """The Procfile's command line for process `name`, as argv (the Redis to use is in the environment)."""
    line = next(line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith(f"{name}:"))
    return shlex.split(line.split(":", 1)[1])


def healthy(base_url: str) -> bool:
    """Does the server answer /health yet? Refused, or a read timeout while its worker boots: not yet."""
    try:
        return requests.get(f"{base_url}/health", timeout=1).status_code == 200
    except requests.RequestException:
        return False


def stop(process: subprocess.Popen, sig: int = signal.SIGKILL, *, grace: float = 15) -> None:
    """Stop a process this run started, by its PID (the machine is shared): `sig` (SIGTERM where a
    clean shutdown matters), then SIGKILL if it has not ended within `grace` seconds."""
    if process.poll() is not None:
        return
    os.kill(process.pid, sig)
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=5)


@contextmanager
def gunicorn_on(test_env: dict, log_path: Path, **env):
    """A real gunicorn (gunicorn.conf.py, one process) on a free local port and the tests' database,
    with `env` on top; yields the port once it listens, and stops it by PID afterwards."""
    port = free_port()
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("TEST_", "PYTEST"))}
    environment.update(test_env, HOST="127.0.0.1", PORT=str(port), WEB_CONCURRENCY="1", LOG_LEVEL="WARNING",
                       EMBEDDED_JOBS="0", PYTHONPATH=str(ROOT), **env)
    with open(log_path, "wb") as log:
        web = subprocess.Popen([str(BIN / "gunicorn"), "--config", "gunicorn.conf.py", "wsgi:app"], cwd=ROOT,
                               env=environment, stdout=log, stderr=log, start_new_session=True)
        try:
            def listening():
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    return True
                except OSError:
                    return False
            wait_for(listening, timeout=30, what="gunicorn to listen")
            yield port
        finally:
            stop(web, signal.SIGTERM, grace=30)
