"""`make fuzz`: schemathesis against the live app, from outside, on every operation of the document.

Starts gunicorn on an ephemeral 127.0.0.1 port (the embedded default, or PostgreSQL/Redis when
TEST_DATABASE_URL/TEST_REDIS_URL are set: a `<db>_fuzz` database beside the test one), creates a
store and key through the CLI, runs schemathesis with that key (examples, coverage, fuzzing and
stateful phases; bounded by FUZZ_MAX_EXAMPLES and a fixed FUZZ_SEED; scripts/fuzz_hooks.py adds NUL
bytes and unpaired surrogates to generated strings), prints the counts and fails on any 5xx, any
response that violates the document, and any error of the run (a step that could not be sent, a
request that timed out), which schemathesis itself may count and still exit 0 on.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))          # a plain script: make the project's modules importable
from tests.support.databases import sibling_database  # noqa: E402
MAX_EXAMPLES = os.environ.get("FUZZ_MAX_EXAMPLES", "25")
SEED = os.environ.get("FUZZ_SEED", "8")
# Beside CI's other suites on two cores one run took 819 s (alone, minutes):
# a deadline that a loaded machine passes fails CI without any finding.
RUN_TIMEOUT = int(os.environ.get("FUZZ_TIMEOUT_SECONDS", "1500"))
REQUEST_TIMEOUT = "30"      # a request the loaded machine answers slowly is not a finding; a hang still is


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_environment(workdir: str, port: int) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "REDIS_URL"))}
    env.update({
        "DATABASE_URL": sibling_database("fuzz", workdir),
        "PUBLIC_BASE_URL": f"http://127.0.0.1:{port}",
        "HOST": "127.0.0.1", "PORT": str(port),
        # One worker on SQLite (one writer); the embedded fakeredis then holds every counter.
        "WEB_CONCURRENCY": "2" if os.environ.get("TEST_DATABASE_URL") else "1", "WEB_THREADS": "4",
        # Limits stay on (headers are checked) but high enough not to hide routes behind 429s.
        "RATE_LIMIT_WRITE_PER_MINUTE": "100000", "RATE_LIMIT_READ_PER_MINUTE": "100000",
        "RATE_LIMIT_PUBLIC_CHECKOUT_PER_CLIENT": "100000", "RATE_LIMIT_PUBLIC_CHECKOUT_PER_TOKEN": "100000",
        "RATE_LIMIT_PUBLIC_CHECKOUT_PER_IP": "100000",
        "RATE_LIMIT_PUBLIC_READS_PER_IP": "100000",
        "LOG_LEVEL": "WARNING", "SWAP_PROVIDER": "sandbox",
        # The fuzzed app must reach nothing outside this machine: no jobs run in the web process
        # (fuzzed webhook URLs are never dialled), and name lookups stay local (fuzz_sandbox).
        "EMBEDDED_JOBS": "0",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "scripts" / "fuzz_sandbox"),
                                                    os.environ.get("PYTHONPATH")])),
    })
    if os.environ.get("TEST_REDIS_URL"):
        env["REDIS_URL"] = os.environ["TEST_REDIS_URL"]
    return env


def schemathesis_environment() -> dict:
    """schemathesis with our hooks (scripts/fuzz_hooks.py): NUL bytes and unpaired surrogates too."""
    return {**os.environ, "SCHEMATHESIS_HOOKS": "fuzz_hooks",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "scripts"), os.environ.get("PYTHONPATH")]))}


def flask(env: dict, *args: str) -> str:
    return subprocess.run([str(BIN / "flask"), "--app", "wsgi", *args], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True).stdout


def wait_for(url: str, server: subprocess.Popen, deadline_seconds: float = 30) -> None:
    deadline = time.monotonic() + deadline_seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"fuzz: the server exited with {server.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"fuzz: {url} did not answer within {deadline_seconds} s")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="tender-fuzz-") as workdir:
        port = free_port()
        env = server_environment(workdir, port)
        flask(env, "db", "upgrade")
        store = json.loads(flask(env, "stores", "create", "--name", "Fuzz shop", "--payout-wallet",
                                 "fuzz-merchant.near", "--json"))
        log = open(Path(workdir) / "server.log", "w")
        server = subprocess.Popen([str(BIN / "gunicorn"), "--config", "gunicorn.conf.py", "wsgi:app"],
                                  cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        base = f"http://127.0.0.1:{port}"
        try:
            wait_for(base + "/health", server)
            return 0 if run_schemathesis(base, store["api_key"], Path(workdir)) else 1
        finally:
            os.killpg(server.pid, signal.SIGTERM)     # the gunicorn we started, and its workers
            server.wait(timeout=30)
            log.close()
            if os.environ.get("FUZZ_SHOW_SERVER_LOG"):
                sys.stdout.write((Path(workdir) / "server.log").read_text()[-20000:])


# schemathesis closes with a pytest-style banner ("==== 3 warnings in 44.63s ===="). CI reads the
# last test-runner line it sees, and that one counts no test, so it is reworded; the run's own
# totals are in the summary and in .ci/run's closing line.
PYTEST_STYLE_CLOSING_LINE = re.compile(r"^=+ (.*) in ([0-9.]+)s(?: \([0-9:]+\))? =+$")


def run_schemathesis(base: str, api_key: str, workdir: Path) -> bool:
    """Every phase in one run (the stateful phase fills its links in from what the earlier ones
    created); prints the output and the verdict and says whether it passed."""
    report = workdir / "report.json"
    # positive_data_acceptance is left out: a body can match every JSON Schema keyword and
    # still break a cross-field rule (fixed mode refuses min_amount; one cursor direction at
    # a time), whose documented answer is 400. Every other check runs.
    command = [str(BIN / "schemathesis"), "run", f"{base}/v1/openapi.json", "--url", base,
               "--header", f"Authorization: Bearer {api_key}",
               "--checks", "all", "--exclude-checks", "positive_data_acceptance",
               "--max-examples", MAX_EXAMPLES, "--seed", SEED, "--workers", "1",
               "--request-timeout", REQUEST_TIMEOUT, "--output-truncate", "true",
               "--report", "json", "--report-json-path", str(report)]
    started, output = time.monotonic(), workdir / "schemathesis.log"
    # cwd: schemathesis keeps a crash cache in .schemathesis/ of its working directory.
    with output.open("w") as schemathesis_log:
        try:
            returncode = subprocess.run(command, cwd=workdir, timeout=RUN_TIMEOUT,
                                        env=schemathesis_environment(),
                                        stdout=schemathesis_log, stderr=subprocess.STDOUT).returncode
        except subprocess.TimeoutExpired:
            returncode = None
    print_without_closing_line(output.read_text())
    if returncode is None:
        print(f"fuzz: schemathesis stopped after {time.monotonic() - started:.0f} s (FUZZ_TIMEOUT_SECONDS)")
        return False
    print(f"fuzz: schemathesis exited {returncode} after {time.monotonic() - started:.0f} s")
    errors = summarize(report)
    if errors and returncode == 0:
        # schemathesis can count a phase's errors (a step it could not send, a request that timed
        # out) and still exit 0; an error here is never taken for a pass.
        print(f"fuzz: {sum(error['count'] for error in errors)} errors of the run: failed")
        return False
    return returncode == 0


def print_without_closing_line(output: str) -> None:
    for line in output.splitlines():
        closing = PYTEST_STYLE_CLOSING_LINE.match(line.strip())
        print(f"fuzz: schemathesis finished after {closing[2]} s ({closing[1]})" if closing else line)
    sys.stdout.flush()


def summarize(report: Path) -> list[dict]:
    """Print the report's figures and errors; returns its errors ({title, count}; a missing report is one)."""
    if not report.exists():
        print("fuzz: no JSON report written")
        return [{"title": "no JSON report written", "count": 1}]
    data = json.loads(report.read_text())
    print("fuzz: report summary:", json.dumps({k: v for k, v in data.items() if not isinstance(v, (list, dict))}))
    for key in ("phases", "test_cases", "failures", "errors"):
        if data.get(key):
            print(f"fuzz: {key}:", json.dumps(data[key])[:2000])
    return list(data.get("errors") or [])


if __name__ == "__main__":
    sys.exit(main())
