"""The Procfile's worker class (infra/rq_worker.py): while Redis cannot be reached it tries again
every second, never waiting longer after each failure as rq's own worker does (up to a minute)."""
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
from tests.support.processes import stop


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
