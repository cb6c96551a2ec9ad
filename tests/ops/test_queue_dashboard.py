"""rq-dashboard, as the Procfile runs it (bin/queue-dashboard), works with the RQ we pin, behind the
operator credentials."""
import os
import subprocess
import sys

import pytest
import requests

from infra import queues
from tests.support.polling import free_port, wait_for

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DASHBOARD = os.path.join(ROOT, "bin", "queue-dashboard")


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


def _listening_on(port: int) -> list[str]:
    """The local addresses (kernel hex, as /proc/net/tcp writes them) of the sockets listening on `port`."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            for line in list(lines)[1:]:
                local, state = line.split()[1], line.split()[3]
                address, _, hex_port = local.partition(":")
                if state == "0A" and int(hex_port, 16) == port:
                    found.append(address)
    return found


def test_the_dashboard_refuses_to_start_without_operator_credentials():
    result = subprocess.run([DASHBOARD], env=_env(REDIS_URL="redis://127.0.0.1:6379/0"),
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert "OPERATOR_USERNAME and OPERATOR_PASSWORD must be set" in result.stderr


@pytest.mark.skipif(not os.environ.get("TEST_REDIS_URL"), reason="the dashboard reads a real Redis")
def test_the_dashboard_shows_tenders_queues_and_asks_for_the_operator(app, test_env):
    """Started as the Procfile starts it, without QUEUE_DASHBOARD_HOST: gunicorn on loopback only."""
    queues.queue("maintenance").enqueue("jobs.webhooks.relay_outbox")
    port = free_port()
    process = subprocess.Popen([DASHBOARD], env=_env(
        REDIS_URL=test_env["REDIS_URL"], OPERATOR_USERNAME="ops", OPERATOR_PASSWORD="s3cret", PORT=str(port)),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/0/data/queues.json"
    try:
        anonymous_status = wait_for(lambda: _anonymous_status(url), timeout=30, what="rq-dashboard to answer")
        answer = requests.get(url, auth=("ops", "s3cret"), timeout=5)
        requeue_by_get = requests.get(f"http://127.0.0.1:{port}/requeue/maintenance", auth=("ops", "s3cret"), timeout=5)
        listening = _listening_on(port)
    finally:
        process.terminate()
        process.wait(timeout=10)

    assert anonymous_status == 401
    assert answer.status_code == 200
    by_name = {queue["name"]: queue for queue in answer.json()["queues"]}
    assert by_name["maintenance"]["count"] == 1
    assert answer.headers["Server"].startswith("gunicorn")           # not Werkzeug's development server
    assert answer.headers["X-Frame-Options"] == "DENY" and "frame-ancestors 'none'" in answer.headers[
        "Content-Security-Policy"]
    assert requeue_by_get.status_code == 405
    assert listening == ["0100007F"]                                   # 127.0.0.1 only, by default


@pytest.fixture
def dashboard(app):
    """The guarded rq-dashboard app in process; its Redis is never reached by these refusals."""
    import queue_dashboard_app

    return queue_dashboard_app.create("ops", "s3cret", "redis://127.0.0.1:1/0").test_client()


def test_without_the_operator_it_is_a_401_that_cannot_be_framed(dashboard):
    answer = dashboard.get("/")
    assert answer.status_code == 401 and answer.json["error"]["code"] == "invalid_operator_credentials"
    assert answer.headers["WWW-Authenticate"].startswith("Basic")
    assert answer.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in answer.headers["Content-Security-Policy"]


def test_a_credentialed_get_never_changes_state(dashboard):
    answer = dashboard.get("/requeue/chain", auth=("ops", "s3cret"))
    assert answer.status_code == 405 and answer.headers["Allow"] == "POST"


def test_a_state_change_from_another_site_is_refused(dashboard):
    for headers in ({"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
        answer = dashboard.post("/requeue/chain", auth=("ops", "s3cret"), headers=headers)
        assert answer.status_code == 403 and answer.json["error"]["code"] == "cross_site_request"


def test_wrong_credentials_are_limited_per_client(dashboard):
    statuses = [dashboard.get("/", auth=("ops", f"guess-{n}")).status_code for n in range(15)]
    assert statuses[:10] == [401] * 10 and set(statuses[10:]) == {429}
    locked = dashboard.get("/", auth=("ops", "s3cret"))
    assert locked.status_code == 429 and int(locked.headers["Retry-After"]) >= 1
