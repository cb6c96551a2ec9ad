"""The Procfile's worker class (infra/rq_worker.py): while Redis cannot be reached it tries again
every second, never waiting longer after each failure as rq's own worker does (up to a minute), and
a Redis lost while a job ends does not end the worker."""
import os
import shutil
import subprocess
import time
from types import SimpleNamespace

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from rq import Queue

from infra.rq_worker import Worker
from tests.support.polling import free_port, wait_for
from tests.support.processes import BIN, ROOT, stop


class _Enough(Exception):
    pass


@pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server")
def test_a_worker_that_lost_redis_tries_again_every_second(monkeypatch, tmp_path):
    port = free_port()
    server = subprocess.Popen(["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "",
                               "--appendonly", "no", "--dir", str(tmp_path)], stdout=subprocess.DEVNULL)
    connection = redis.Redis(port=port, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0))
    waits = []

    def sleep(seconds):          # the worker's wait between tries, recorded instead of slept
        waits.append(seconds)
        if len(waits) == 6:
            raise _Enough()

    try:
        wait_for(lambda: _answers(connection), timeout=20, what="redis-server")
        worker = Worker([Queue("chain", connection=connection)], connection=connection)

        def redis_goes_away(_message):      # once the worker starts listening: every try of its loop is refused
            stop(server)
            # rq's worker module sees a `time` whose sleep records (the real module's stays, for other threads)
            monkeypatch.setattr("rq.worker.base.time", SimpleNamespace(**{**vars(time), "sleep": sleep}))

        monkeypatch.setattr(worker, "procline", redis_goes_away)
        with pytest.raises(_Enough):
            worker.dequeue_job_and_maintain_ttl(timeout=1)
    finally:
        monkeypatch.undo()
        stop(server)
    assert waits == [1.0] * 6        # rq's own: 1, 2, 4, 8, 16, 32


def _answers(connection) -> bool:
    try:
        return connection.ping()
    except redis.RedisError:
        return False


@pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server")
def test_a_worker_whose_job_ends_while_redis_is_away_goes_on_afterwards(tmp_path):
    """rq's own worker quits when a job ends with Redis away (its bookkeeping fails); ours starts its
    loop again, and takes the next job once Redis is back."""
    port = free_port()

    def redis_server():
        return subprocess.Popen(["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "",
                                 "--appendonly", "no", "--dir", str(tmp_path)], stdout=subprocess.DEVNULL)

    observer = redis.Redis(port=port, socket_timeout=5)
    server = redis_server()
    log = open(tmp_path / "worker.log", "wb")
    worker = subprocess.Popen([str(BIN / "rq"), "worker", "--url", f"redis://127.0.0.1:{port}", "--worker-ttl", "5",
                               "--worker-class", "infra.rq_worker.Worker", "recovery"], cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=log, stderr=log)
    try:
        wait_for(lambda: _answers(observer), timeout=20, what="redis-server")
        slow = Queue("recovery", connection=observer).enqueue("time.sleep", 2)
        wait_for(lambda: slow.get_status(refresh=True) == "started", timeout=30, what="the worker to start the job")
        stop(server)                                  # the job ends while Redis is away
        wait_for(lambda: worker.poll() is not None or b"loop quit" in (tmp_path / "worker.log").read_bytes(),
                 timeout=30, what="the job to end without Redis")
        server = redis_server()                       # Redis is back, empty (a failover may lose the queue)
        wait_for(lambda: _answers(observer), timeout=20, what="redis-server again")
        job = Queue("recovery", connection=observer).enqueue("os.getpid")
        wait_for(lambda: worker.poll() is not None or job.get_status(refresh=True) == "finished", timeout=30,
                 what="the worker to take the next job")
        assert worker.poll() is None, (tmp_path / "worker.log").read_text()[-2000:]
    finally:
        stop(worker, sig=15)
        stop(server)
        log.close()
