"""rq-dashboard, as the Procfile runs it (bin/dashboard), works with the RQ we pin, behind the
operator credentials."""
import os
import subprocess
import sys

import pytest
import requests

from infra import queues
from tests.support.polling import free_port, wait_for

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DASHBOARD = os.path.join(ROOT, "bin", "dashboard")


def _anonymous_status(url: str) -> int | None:
    """The status of a read without credentials, or None while it starts (refused, or a read
    timeout while its worker boots)."""
    try:
        return requests.get(url, timeout=2).status_code
    except requests.RequestException:
        return None


def _env(**values) -> dict:
    """This environment without operator credentials, with the venv's rq-dashboard on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPERATOR_USERNAME", "OPERATOR_PASSWORD")}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env["PATH"]
    return {**env, **values}


def test_the_dashboard_refuses_to_start_without_operator_credentials():
    result = subprocess.run([DASHBOARD], env=_env(REDIS_URL="redis://127.0.0.1:6379/0"),
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert "OPERATOR_USERNAME and OPERATOR_PASSWORD must be set" in result.stderr


@pytest.mark.skipif(not os.environ.get("TEST_REDIS_URL"), reason="the dashboard reads a real Redis")
def test_the_dashboard_shows_tenders_queues_and_asks_for_the_operator(app, test_env):
    queues.queue("maintenance").enqueue("jobs.webhooks.relay_outbox")
    port = free_port()
    process = subprocess.Popen([DASHBOARD], env=_env(
        REDIS_URL=test_env["REDIS_URL"], OPERATOR_USERNAME="ops", OPERATOR_PASSWORD="s3cret",
        DASHBOARD_HOST="127.0.0.1", PORT=str(port)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/0/data/queues.json"
    try:
        anonymous_status = wait_for(lambda: _anonymous_status(url), timeout=30, what="rq-dashboard to answer")
        answer = requests.get(url, auth=("ops", "s3cret"), timeout=5)
    finally:
        process.terminate()
        process.wait(timeout=10)

    assert anonymous_status == 401
    assert answer.status_code == 200
    by_name = {queue["name"]: queue for queue in answer.json()["queues"]}
    assert by_name["maintenance"]["count"] == 1
