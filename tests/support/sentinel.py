"""A Redis primary, its replica and Sentinels on loopback ports, as processes of this run: for the
tests of Tender behind Sentinel (tests/ops/test_sentinel.py). Stopped by PID, files in a temporary
folder. Sentinels notice a dead primary after DOWN_AFTER_MS and promote the replica."""
from __future__ import annotations

from contextlib import contextmanager
import os
import shutil
import signal
import subprocess

import redis

from tests.support.polling import free_port, wait_for

MASTER = "tender"
DOWN_AFTER_MS = 500


def available() -> bool:
    return bool(shutil.which("redis-server") and shutil.which("redis-sentinel"))


def _redis_server(workdir, port: int, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "",
                             "--appendonly", "no", "--dir", str(workdir), *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _sentinel(workdir, port: int, primary_port: int, quorum: int) -> subprocess.Popen:
    config = workdir / f"sentinel-{port}.conf"        # Sentinel rewrites its file: one each
    config.write_text(f"bind 127.0.0.1\nport {port}\ndir {workdir}\n"
                      f"sentinel monitor {MASTER} 127.0.0.1 {primary_port} {quorum}\n"
                      f"sentinel down-after-milliseconds {MASTER} {DOWN_AFTER_MS}\n"
                      f"sentinel failover-timeout {MASTER} 5000\n")
    return subprocess.Popen(["redis-sentinel", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Group:
    def __init__(self, workdir, sentinels: int):
        self.workdir = workdir
        self.primary_port, self.replica_port = free_port(), free_port()
        self.sentinel_ports = [free_port() for _ in range(sentinels)]
        # The primary serves a new replica at once: Redis waits 5 s by default for more to join it.
        self.servers = {self.primary_port: _redis_server(workdir, self.primary_port, "--repl-diskless-sync-delay", "0")}
        self.servers[self.replica_port] = _redis_server(workdir, self.replica_port,
                                                        "--replicaof", "127.0.0.1", str(self.primary_port))
        self.sentinels: list[subprocess.Popen] = []

    def start_sentinels(self) -> None:
        """Once the replica is linked: a Sentinel learns the replicas from the primary's INFO, which it
        asks on connecting and then only every 10 s, so Sentinels started earlier wait that long."""
        quorum = len(self.sentinel_ports) // 2 + 1
        self.sentinels = [_sentinel(self.workdir, port, self.primary_port, quorum) for port in self.sentinel_ports]

    def replica_linked(self) -> bool:
        try:
            replica = redis.Redis(port=self.replica_port, socket_timeout=1, decode_responses=True)
            return replica.info("replication")["master_link_status"] == "up"
        except redis.RedisError:
            return False

    @property
    def environ(self) -> dict:
        """The settings that point Tender at this group."""
        return {"REDIS_SENTINELS": ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports),
                "REDIS_SENTINEL_MASTER": MASTER}

    def master_port(self) -> int | None:
        """The master's port as the first Sentinel that answers names it."""
        for port in self.sentinel_ports:
            try:
                return int(redis.Redis(port=port, socket_timeout=1).sentinel_get_master_addr_by_name(MASTER)[1])
            except (redis.RedisError, TypeError):
                continue
        return None

    def ready(self) -> bool:
        """Every Sentinel knows the replica and the other Sentinels (a failover needs both)."""
        try:
            for port in self.sentinel_ports:
                sentinel = redis.Redis(port=port, socket_timeout=1, decode_responses=True)
                if not sentinel.sentinel_slaves(MASTER) or \
                        len(sentinel.sentinel_sentinels(MASTER)) < len(self.sentinel_ports) - 1:
                    return False
        except redis.RedisError:
            return False
        return self.replica_linked()

    def kill_master(self) -> int:
        """kill -9 the current master; its port."""
        port = self.master_port()
        self.servers[port].send_signal(signal.SIGKILL)
        self.servers[port].wait(timeout=10)
        return port

    def stop(self) -> None:
        for process in [*self.servers.values(), *self.sentinels]:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=10)


@contextmanager
def sentinel_group(workdir, *, sentinels: int = 3):
    group = Group(workdir, sentinels)
    try:
        wait_for(group.replica_linked, timeout=30, what="the replica to link to the primary", interval=0.05)
        group.start_sentinels()
        wait_for(group.ready, timeout=30, what="the Sentinels to see the replica and each other", interval=0.2)
        yield group
    finally:
        group.stop()
