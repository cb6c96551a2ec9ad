"""`make stack` (the README's real-stack command) starts every Procfile process but `release` and
`queues` under honcho on PostgreSQL and Redis, without operator credentials, and stops with
them. A client generated from the OpenAPI document it serves then drives the sandbox flow through
it. Skipped unless TEST_DATABASE_URL and TEST_REDIS_URL are set (the real stack)."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile

import pytest
import requests

from tests.support.databases import sibling_database
from tests.support.node_tools import ROOT, node_tool
from tests.support.polling import free_port, wait_for

REDIS_URL = os.environ.get("TEST_REDIS_URL")
pytestmark = pytest.mark.skipif(not (os.environ.get("TEST_DATABASE_URL") and REDIS_URL),
                                reason="needs TEST_DATABASE_URL and TEST_REDIS_URL (the real stack)")
KEY = re.compile(r"API key \(shown once, keep it\): (sk_live_[0-9a-f]{40})")
STARTED = re.compile(r"system\s*\| (\w+)\.1 started \(pid=(\d+)\)")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    import redis

    workdir = tmp_path_factory.mktemp("stack")
    port = free_port()
    env_file = workdir / "stack.env"
    env_file.write_text("\n".join([
        f"DATABASE_URL={sibling_database('stack', workdir)}", f"REDIS_URL={REDIS_URL}", "SWAP_PROVIDER=sandbox",
        "HOST=127.0.0.1", f"PORT={port}", f"PUBLIC_BASE_URL=http://127.0.0.1:{port}", "WEB_CONCURRENCY=1",
        "WEB_THREADS=4", "LOG_LEVEL=WARNING", "CHAIN_POLL_INTERVAL_SECONDS=1", "SETTLEMENT_POLL_INTERVAL_SECONDS=1",
        "EXPIRY_SWEEP_INTERVAL_SECONDS=1"]) + "\n")
    redis.Redis.from_url(REDIS_URL).flushdb()
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("TEST_", "PYTEST", "DATABASE_URL", "REDIS_URL", "OPERATOR_"))}
    log_path = workdir / "stack.log"
    log = log_path.open("wb")
    make = subprocess.Popen(["make", "--no-print-directory", "stack", f"STACK_ENV={env_file}"], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}"

    def started():
        text = log_path.read_text(errors="replace")
        assert make.poll() is None, text[-3000:]
        key = KEY.search(text)
        try:
            up = requests.get(base_url + "/health", timeout=2).status_code == 200
        except requests.RequestException:       # not listening yet, or still starting
            up = False
        return up and key and (key.group(1), dict(STARTED.findall(text)))

    try:
        api_key, pids = wait_for(started, timeout=90, what="make stack to answer /health")
        yield {"base_url": base_url, "api_key": api_key, "pids": pids, "make": make, "log": log_path}
    finally:
        if make.poll() is None:
            os.killpg(make.pid, signal.SIGINT)     # the session we started: make and honcho, as Ctrl-C does
        make.wait(timeout=30)
        log.close()


def test_make_stack_runs_every_process_but_release_and_queues(stack):
    procfile = (ROOT / "Procfile").read_text().splitlines()
    expected = {line.split(":", 1)[0] for line in procfile if line and not line.startswith("#")} - {"release", "queues"}
    pids = {name: int(pid) for name, pid in stack["pids"].items()}
    assert set(pids) == expected
    assert all(_alive(pid) for pid in pids.values()), stack["log"].read_text()[-3000:]


def test_a_generated_client_type_checks_and_drives_the_sandbox_flow(stack):
    tsc, generate = node_tool("tsc"), node_tool("openapi-typescript")
    (ROOT / "node_modules" / ".cache").mkdir(exist_ok=True)
    build = tempfile.mkdtemp(prefix="tender-client-", dir=ROOT / "node_modules" / ".cache")   # resolves node_modules
    try:
        document = requests.get(stack["base_url"] + "/v1/openapi.json", timeout=10)
        (ROOT / build / "openapi.json").write_bytes(document.content)
        (ROOT / build / "package.json").write_text('{"type": "module"}')
        shutil.copy(ROOT / "tests" / "client" / "sandbox_flow.ts", build)
        node_env = {"PATH": "/usr/bin:/bin"}
        subprocess.run([str(generate), "openapi.json", "--output", "tender.d.ts"], cwd=build, env=node_env,
                       check=True, capture_output=True, timeout=120)
        checked = subprocess.run([str(tsc), "--strict", "--target", "es2022", "--module", "nodenext",
                                  "--moduleResolution", "nodenext", "--skipLibCheck", "sandbox_flow.ts"],
                                 cwd=build, env=node_env, capture_output=True, text=True, timeout=180)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        ran = subprocess.run(["node", "sandbox_flow.js", stack["base_url"], stack["api_key"]], cwd=build,
                             env=node_env, capture_output=True, text=True, timeout=90)
        assert ran.returncode == 0, ran.stderr + stack["log"].read_text()[-3000:]
    finally:
        shutil.rmtree(build, ignore_errors=True)

    seen = json.loads(ran.stdout.strip().splitlines()[-1])
    assert seen["quoted_status"] == "awaiting_payment"
    assert (seen["status"], seen["swap_status"], seen["received_amount"]) == ("paid", None, "25.00")
    assert seen["transaction_types"] == ["payment_origin", "settlement"]


def test_stopping_make_stack_stops_every_process(stack):
    pids = {name: int(pid) for name, pid in stack["pids"].items()}
    os.killpg(stack["make"].pid, signal.SIGINT)
    stack["make"].wait(timeout=30)
    wait_for(lambda: not any(_alive(pid) for pid in pids.values()), timeout=30, what="every stack process to exit")
