"""Shared plumbing of the benchmarks that run the real processes: a scratch PostgreSQL database,
gunicorn / rq processes started and stopped by PID, wrk runs and their parsed figures.

Every process a benchmark starts is stopped by its PID in a `finally` (the machine is shared).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import requests

from tests.support.polling import free_port, wait_for
from tests.support.processes import stop

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def database_url(default_name: str = "tender_bench") -> str:
    url = os.environ.get("DATABASE_URL") or f"postgresql://postgres@127.0.0.1:5432/{default_name}"
    if not url.startswith("postgres"):
        raise SystemExit("this benchmark needs PostgreSQL (DATABASE_URL=postgresql://…)")
    return url


def reset_database(url: str) -> None:
    """A fresh, migrated schema in the scratch database: a PostgreSQL one is created if missing and
    emptied; a SQLite one is a new file (the embedded default)."""
    if url.startswith("postgres"):
        from tests.conftest import _create_postgres_database

        _create_postgres_database(url)
    subprocess.run([str(BIN / "flask"), "--app", "wsgi", "db", "upgrade"], cwd=ROOT, env=env(url), check=True,
                   capture_output=True)


def env(url: str, **extra) -> dict:
    values = {key: value for key, value in os.environ.items() if not key.startswith(("TEST_", "PYTEST"))}
    values.update({"DATABASE_URL": url, "PYTHONPATH": str(ROOT), "LOG_LEVEL": "WARNING",
                   "RATE_LIMIT_WRITE_MODE": "off", "RATE_LIMIT_READ_MODE": "off", "RATE_LIMIT_PUBLIC_MODE": "off",
                   "EMBEDDED_JOBS": "0"})
    values.setdefault("SWAP_PROVIDER", "sandbox")   # required on PostgreSQL
    values.update({key: str(value) for key, value in extra.items()})
    return values


def create_store(url: str, **extra_env) -> tuple[str, str]:
    """(store id, API key) through the operator CLI, as an operator would."""
    created = subprocess.run([str(BIN / "flask"), "--app", "wsgi", "stores", "create", "--name", "Bench",
                              "--payout-wallet", "bench.near", "--json"], cwd=ROOT, env=env(url, **extra_env),
                             check=True, capture_output=True, text=True)
    payload = json.loads(created.stdout.strip().splitlines()[-1])
    return payload["store_id"], payload["api_key"]


class Processes:
    """Processes this benchmark started, stopped by PID (SIGTERM, then SIGKILL after a grace)."""

    def __init__(self):
        self.running: list[subprocess.Popen] = []
        self.log_dir = Path(tempfile.mkdtemp(prefix="tender-bench-"))

    def start(self, name: str, argv: list[str], environment: dict) -> subprocess.Popen:
        log = open(self.log_dir / f"{name}.log", "ab")
        process = subprocess.Popen(argv, cwd=ROOT, env=environment, stdout=log, stderr=log, start_new_session=True)
        self.running.append(process)
        return process

    def stop(self, process: subprocess.Popen) -> None:
        if process in self.running:
            self.running.remove(process)
        stop(process, signal.SIGTERM, grace=30)

    def stop_all(self) -> None:
        for process in list(reversed(self.running)):
            self.stop(process)


def start_gunicorn(processes: Processes, app: str, environment: dict, *, workers: int, threads: int,
                   name: str = "web") -> tuple[subprocess.Popen, str]:
    port = free_port()
    environment = {**environment, "HOST": "127.0.0.1", "PORT": str(port), "WEB_CONCURRENCY": str(workers),
                   "WEB_THREADS": str(threads)}
    process = processes.start(name, [str(BIN / "gunicorn"), "--config", "gunicorn.conf.py", app], environment)
    base = f"http://127.0.0.1:{port}"

    def up():
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited; see {processes.log_dir}/{name}.log")
        try:
            return requests.get(f"{base}/health", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    wait_for(up, timeout=30, what=f"{name} to answer /health")
    return process, base


LUA_POST = """
wrk.method = "POST"
wrk.body = '%s'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer %s"
"""


def require_wrk() -> None:
    """The benchmarks that load HTTP say at once, in one line, that they need wrk and how to get it,
    before they seed anything (wrk is a Debian package, not a Python one)."""
    if shutil.which("wrk") is None:
        raise SystemExit("this benchmark drives HTTP with wrk, which is not installed: "
                         "apt-get install wrk (Debian, Ubuntu), then run it again")


def wrk(url: str, *, seconds: int, connections: int, api_key: str = "", body: str | None = None,
        headers: dict | None = None) -> dict:
    """Run wrk; return requests/s, p50/p99 latency in ms and the count of non-2xx answers.
    `headers` go on every GET (a dashboard page's session cookie)."""
    require_wrk()
    argv = ["wrk", "-t", "2", "-c", str(connections), "-d", f"{seconds}s", "--latency", url]
    if body is not None:
        script = Path(tempfile.mkstemp(suffix=".lua")[1])
        script.write_text(LUA_POST % (body, api_key))
        argv[1:1] = ["-s", str(script)]
    elif api_key:
        argv[1:1] = ["-H", f"Authorization: Bearer {api_key}"]
    for name, value in (headers or {}).items():
        argv[1:1] = ["-H", f"{name}: {value}"]
    run = subprocess.run(argv, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"wrk exited {run.returncode}: {run.stderr.strip() or run.stdout.strip()}")
    out = run.stdout
    figures = {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
               "p50": _ms(re.search(r"\s50%\s+([\d.]+\w+)", out).group(1)),
               "p99": _ms(re.search(r"\s99%\s+([\d.]+\w+)", out).group(1)),
               "non_2xx": int((re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out) or [0, 0])[1]),
               "errors": bool(re.search(r"Socket errors", out))}
    return figures


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(\w+)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


def bulk_invoices(url: str, store_id: str, count: int, *, status_sql: str = "'expired'",
                  expires_sql: str = "now() AT TIME ZONE 'utc' - interval '1 hour'", start: int = 0) -> float:
    """Insert `count` invoices of one store in one INSERT … SELECT over generate_series (seconds taken).

    Row i is created `i` x 6 s before now (1,000,000 rows span 69 days, inside the list's 90-day
    default window). `status_sql` and `expires_sql` are SQL expressions of `i`."""
    import psycopg2

    began = time.perf_counter()
    connection = psycopg2.connect(url)
    with connection, connection.cursor() as cursor:
        cursor.execute(f"""
            INSERT INTO invoice (id, public_id, store_id, status, amount, currency, order_amount, order_currency,
                                 output_asset, external_order_id, metadata, expires_at, created_at, updated_at)
            SELECT md5('bench' || i)::uuid, 'inv_' || md5('public' || i), %s, {status_sql}, 25, 'USD', 25, 'USD',
                   'usdc.near', 'order-' || i, '{{"cart":"42"}}', {expires_sql},
                   now() AT TIME ZONE 'utc' - i * interval '6 seconds', now() AT TIME ZONE 'utc'
            FROM generate_series(%s, %s) AS i""", (store_id, start + 1, start + count))
        cursor.execute("ANALYZE invoice")
    connection.close()
    return time.perf_counter() - began


def sql(url: str, query: str, *params):
    import psycopg2

    connection = psycopg2.connect(url)
    try:
        with connection, connection.cursor() as cursor:
            cursor.execute(query, params)
            return cursor.fetchall() if cursor.description else cursor.rowcount
    finally:
        connection.close()


def vacuum_analyze(url: str) -> None:
    """VACUUM ANALYZE (outside a transaction): fresh statistics, and a visibility map that lets
    index-only scans skip the heap, as autovacuum leaves a table that was bulk-loaded."""
    import psycopg2

    connection = psycopg2.connect(url)
    try:
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    finally:
        connection.close()


def load() -> str:
    """The 1-minute load average and the core count, printed beside every figure (a shared machine)."""
    return f"{os.getloadavg()[0]:.1f}/{os.cpu_count()} cores"
