"""Every process is safe to kill (docs/operations.md#processes-that-die), on the real stack: a
SIGKILLed worker leaves no process behind and leaves RQ's worker registry (what rq-dashboard shows)
within its heartbeat TTL; two gunicorn instances on one machine share no control socket.
Skipped without TEST_*."""
from __future__ import annotations

import os
from pathlib import Path
import signal
import stat
import subprocess

import pytest

from tests.support.polling import free_port, wait_for
from tests.support.processes import (DATABASE_URL, REDIS_URL, ROOT, healthy, observer_redis, procfile_command,
                                     real_stack_env, stop)

pytestmark = pytest.mark.skipif(not (DATABASE_URL and REDIS_URL),
                                reason="needs TEST_DATABASE_URL and TEST_REDIS_URL (the real stack)")

# The worker's --worker-ttl (5 s) plus the 60 s RQ adds to every heartbeat's expiry, plus slack.
REGISTRY_DEADLINE_SECONDS = 90


def _session_members(session_id: int) -> list[int]:
    """PIDs of the live processes in one session (each test process starts its own)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session_id and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def test_a_killed_worker_leaves_no_process_behind_and_leaves_the_registry(app, tmp_path):
    from rq import Worker

    connection = observer_redis()
    before = {worker.name for worker in Worker.all(connection=connection)}
    log = open(tmp_path / "worker.log", "wb")
    worker = subprocess.Popen(procfile_command("worker"), cwd=ROOT, stdout=log, stderr=log,
                              start_new_session=True, env=real_stack_env())
    try:
        name = wait_for(lambda: next((w.name for w in Worker.all(connection=connection) if w.name not in before
                                      and w.pid == worker.pid), None), timeout=30, what="the worker to register")
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
        # No child outlives it (RQ's `--with-scheduler` forked one that kept the scheduler lock).
        wait_for(lambda: not _session_members(worker.pid), timeout=5, what="the worker's children to be gone")
        assert not connection.keys("rq:scheduler-lock:*")
        wait_for(lambda: name not in {w.name for w in Worker.all(connection=connection)},
                 timeout=REGISTRY_DEADLINE_SECONDS, interval=1, what="the dead worker to leave RQ's registry")
    finally:
        stop(worker)
        log.close()


def test_two_gunicorn_instances_share_no_control_socket(app, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    own_socket = tmp_path / "a.ctl"
    instances = []
    try:
        for extra in ({"GUNICORN_CONTROL_SOCKET": str(own_socket)}, {}):
            port = free_port()
            env = real_stack_env(HOST="127.0.0.1", PORT=str(port), WEB_CONCURRENCY="1", WEB_THREADS="2",
                                 HOME=str(home), **extra)
            env.pop("XDG_RUNTIME_DIR", None)
            log = open(tmp_path / f"web-{port}.log", "wb")
            instances.append((subprocess.Popen(procfile_command("web"), cwd=ROOT, stdout=log, stderr=log,
                                               start_new_session=True, env=env), log))
            wait_for(lambda: healthy(f"http://127.0.0.1:{port}"), timeout=30, what="gunicorn to answer /health")
        assert all(process.poll() is None for process, _ in instances)
        assert stat.S_ISSOCK(own_socket.stat().st_mode)                   # asked for: its own path
        assert not (home / ".gunicorn").exists()                          # not asked for: none at all
    finally:
        for process, log in instances:
            stop(process)
            log.close()
