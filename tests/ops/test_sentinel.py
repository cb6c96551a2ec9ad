"""Tender behind Redis Sentinel, on a real primary, replica and three Sentinels on loopback ports:
the app's client (with its breaker and short timeouts), `rq worker` and the scheduler as the
Procfile runs them, through a failover with the primary killed -9. Skipped where redis-sentinel is
not installed, except in CI (.ci/run installs it)."""
import os
import subprocess
import sys

import pytest
import redis
from rq import Queue
from rq.job import Job

from config import load_settings
from infra import redis_breaker
from tests.support import sentinel
from tests.support.polling import wait_for
from tests.support.processes import ROOT, procfile_command, stop

pytestmark = pytest.mark.skipif(not sentinel.available() and not os.environ.get("CI"),
                                reason="needs redis-server and redis-sentinel")


@pytest.fixture
def group(tmp_path):
    with sentinel.sentinel_group(tmp_path) as started:
        yield started


def _writes(client, key) -> bool:
    try:
        client.set(key, "1")
        return True
    except redis.RedisError:
        return False


def test_the_app_client_finds_the_new_master_after_a_failover(group):
    client = redis_breaker.client(load_settings(group.environ).redis)
    assert _writes(client, "before")
    old = group.kill_master()

    assert not _writes(client, "during")                 # the dead master: refused, and the breaker opens
    assert redis_breaker.breaker_of(client).is_open
    wait_for(lambda: _writes(client, "after"), timeout=30, what="a write through the promoted replica")
    assert client.connection_pool.get_master_address()[1] == group.replica_port != old


def _env(group, **extra) -> dict:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("TEST_", "PYTEST", "REDIS_", "DATABASE_URL"))}
    return {**env, **group.environ, "PYTHONPATH": str(ROOT), "EMBEDDED_JOBS": "0",
            "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{env['PATH']}", **extra}


def test_workers_and_the_scheduler_carry_on_after_a_failover(group, tmp_path):
    """`rq worker --config infra.rq_config` reconnects by itself; `rq cron` is kept going by the
    scheduler process (scheduler/supervise.py) and enqueues its sweeps on the new master."""
    env = _env(group, CHAIN_POLL_INTERVAL_SECONDS="1", HOT_POLL_INTERVAL_SECONDS="1",
               DATABASE_URL=f"sqlite:///{tmp_path}/unused.db")
    worker_command = [part for part in procfile_command("worker") if part not in ("chain", "settlement", "maintenance", "mail")]
    log = open(tmp_path / "processes.log", "w")
    processes = [subprocess.Popen([*worker_command, "sentinel-test"], cwd=ROOT, env=env, stdout=log, stderr=log,
                                  start_new_session=True),
                 subprocess.Popen(procfile_command("scheduler"), cwd=ROOT, env=env, stdout=log, stderr=log,
                                  start_new_session=True)]
    observer = redis.sentinel.Sentinel([("127.0.0.1", port) for port in group.sentinel_ports],
                                       sentinel_kwargs={"socket_timeout": 1}).master_for(
        sentinel.MASTER, socket_timeout=1, retry_on_timeout=False)

    def sweeps_enqueued() -> int:
        try:
            return observer.llen("rq:queue:chain")
        except redis.RedisError:
            return 0

    def job_done(queue_name) -> bool:
        try:
            job = Queue(queue_name, connection=observer).enqueue("os.getpid")
            return wait_for(lambda: _status(Job.fetch(job.id, connection=observer)) == "finished",
                            timeout=20, what="the worker to run a job")
        except (redis.RedisError, AssertionError):
            return False

    try:
        wait_for(lambda: sweeps_enqueued() > 0, timeout=30, what="the scheduler's first sweeps")
        assert job_done("sentinel-test")
        group.kill_master()
        wait_for(lambda: group.master_port() == group.replica_port, timeout=30, what="the Sentinels to fail over")
        before = wait_for(sweeps_enqueued, timeout=30, what="the new master to answer")
        wait_for(lambda: sweeps_enqueued() > before + 2, timeout=30, what="sweeps enqueued on the new master")
        wait_for(lambda: job_done("sentinel-test"), timeout=60, what="the worker to take a job from the new master")
        assert all(process.poll() is None for process in processes), (tmp_path / "processes.log").read_text()[-3000:]
    finally:
        for process in processes:
            stop(process, sig=15)
        log.close()


def _status(job) -> str:
    status = job.get_status()
    return getattr(status, "value", status)


def test_the_scheduler_process_starts_rq_cron_again_after_it_fails(tmp_path):
    from scheduler import supervise

    marker = tmp_path / "runs"
    # A child that fails twice, then ends cleanly: started three times, and its 0 is passed on.
    child = [sys.executable, "-c", f"import pathlib, sys; p = pathlib.Path({str(marker)!r}); "
                                   "p.write_text(p.read_text() + 'x' if p.exists() else 'x'); "
                                   "sys.exit(0 if len(p.read_text()) >= 3 else 1)"]
    assert supervise.main(child, pause=0.01) == 0
    assert marker.read_text() == "xxx"
    marker.unlink()
    # One that never starts: given up after max_restarts, its failure passed on.
    assert supervise.main([sys.executable, "-c", "raise SystemExit(3)"], max_restarts=2, pause=0.01) == 3


def test_killing_the_scheduler_process_ends_its_rq_cron_too(tmp_path):
    """A SIGKILL gives the scheduler no chance to stop its child: the kernel does (PR_SET_PDEATHSIG)."""
    import signal

    pid_file = tmp_path / "child.pid"
    child = f"import os, pathlib, time; pathlib.Path({str(pid_file)!r}).write_text(str(os.getpid())); time.sleep(60)"
    scheduler = subprocess.Popen([sys.executable, "-c", "import sys; from scheduler import supervise; "
                                  f"sys.exit(supervise.main([sys.executable, '-c', {child!r}]))"], cwd=ROOT,
                                 env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        child_pid = int(wait_for(lambda: pid_file.exists() and pid_file.read_text(), timeout=30, what="the child"))
        scheduler.send_signal(signal.SIGKILL)
        scheduler.wait(timeout=10)
        wait_for(lambda: not _alive(child_pid), timeout=10, what="the child to end with its scheduler")
    finally:
        stop(scheduler)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_the_dashboard_reads_the_queues_through_the_sentinels(group):
    """bin/queue-dashboard hands rq-dashboard the Sentinels (a redis+sentinel:// URL built from the same variables)."""
    import requests

    from tests.support.polling import free_port

    master = redis.sentinel.Sentinel([("127.0.0.1", port) for port in group.sentinel_ports],
                                     sentinel_kwargs={"socket_timeout": 1}).master_for(sentinel.MASTER, socket_timeout=1)
    Queue("maintenance", connection=master).enqueue("os.getpid")
    port = free_port()
    env = {**_env(group), "OPERATOR_USERNAME": "ops", "OPERATOR_PASSWORD": "s3cret", "QUEUE_QUEUE_DASHBOARD_HOST": "127.0.0.1",
           "PORT": str(port)}
    dashboard = subprocess.Popen([str(ROOT / "bin" / "queue-dashboard")], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)

    def queues():
        try:
            answer = requests.get(f"http://127.0.0.1:{port}/0/data/queues.json", auth=("ops", "s3cret"), timeout=2)
            return answer.status_code == 200 and answer.json()["queues"]
        except requests.RequestException:
            return None

    try:
        listed = wait_for(queues, timeout=60, what="rq-dashboard to list the queues")
    finally:
        stop(dashboard, sig=15)
    assert {queue["name"]: queue["count"] for queue in listed}.get("maintenance") == 1
