"""bench/slow_clients.py runs end to end at a tiny scale and reports every figure it promises, every
measured request answered (what the figures are is the benchmark's business: no timed assertions
here). On the embedded default, or with TEST_DATABASE_URL on PostgreSQL (a database of its own
beside the tests', which the benchmark empties) and TEST_REDIS_URL."""
import os
import re
import subprocess
import sys
from urllib.parse import urlsplit

from tests.support.processes import DATABASE_URL, REDIS_URL, ROOT


def _environment() -> dict:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("TEST_", "PYTEST")) and key not in ("DATABASE_URL", "REDIS_URL")}
    env.update(PYTHONPATH=str(ROOT), WEB_CONCURRENCY="1", WEB_THREADS="2")
    if DATABASE_URL and DATABASE_URL.startswith("postgres"):
        parts = urlsplit(DATABASE_URL)
        env["DATABASE_URL"] = parts._replace(path=parts.path + "_slowbench").geturl()
    if REDIS_URL:
        env["REDIS_URL"] = REDIS_URL
    return env


def test_the_slow_clients_benchmark_reports_its_figures():
    result = subprocess.run([sys.executable, "-m", "bench.slow_clients", "--rounds", "1", "--requests", "2",
                             "--slow-clients", "3", "--one-address", "2", "--interval-ms", "0"],
                            cwd=ROOT, env=_environment(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    backend = "PostgreSQL + Redis" if DATABASE_URL and DATABASE_URL.startswith("postgres") else "SQLite + fakeredis"
    assert f"1 workers x 2 threads, blueprints.request_reading.ReadWholeRequestsWorker, {backend}" in out, out
    assert re.search(r"^round 1 baseline: health p50 .* create p50 .* failed 0", out, re.M), out
    assert re.search(r"^round 1 loaded  : .* failed 0 .* slow open >= \d+/5  slow answered", out, re.M), out
    for label in ("/health", "create "):
        line = re.search(rf"^{label}: baseline p50 .*$", out, re.M)
        assert line, out
        assert re.search(r"\| loaded p50 .* p99 .* max .* \(n 2\) \| loaded/baseline p50 [\d.]+x p99 [\d.]+x "
                         r"\| loaded p99 [\d.]+ ms against the goal < 1000 ms: (met|NOT met)$", line[0]), line[0]
    assert "failed or unanswered measured requests: 0" in out, out
