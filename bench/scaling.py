"""What a second and a fourth process buy: polls/s (`worker`), webhook deliveries/s (`webhooks`) and
invoice creates/s (`web`) at 1, 2 and 4 processes, with CPU per process beside each figure.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/tender_bench_30 REDIS_URL=redis://127.0.0.1:6379/7 \\
        .venv/bin/python -m bench.scaling [--latency-ms 100] [--processes 1,2,4]

The provider (the sandbox, `SANDBOX_LATENCY_MS`) and the merchant's receiver (a process of this
benchmark) answer after `--latency-ms`, so polling and delivery wait on I/O as they do in
production; creating an invoice calls no provider, so that figure is bound by the web process's
and PostgreSQL's CPU. Each figure: the Procfile's process started N times (gunicorn with
WEB_CONCURRENCY=N), the work queued, the time until it is all done. The ratio to one process is
the scaling; the CPU seconds each process used per wall second say whether the machine (2 cores,
shared) or the design stopped it. It empties the database and the Redis database it is given.
"""
from __future__ import annotations

import argparse
import datetime as dt
from decimal import Decimal
import os
import signal
import subprocess
import sys
import time

from bench import stack
from bench.payflow import procfile

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and its children that it waited for."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def children(pid: int) -> list[int]:
    try:
        return [int(child) for child in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    except FileNotFoundError:
        return []


class CpuMeter:
    """CPU seconds per wall second of each process in `pids`, over a window."""

    def __init__(self, pids: list[int]):
        self.pids = pids
        self.began = time.monotonic()
        self.start = {pid: cpu_seconds(pid) for pid in pids}

    def per_process(self) -> list[float]:
        wall = time.monotonic() - self.began
        return [round((cpu_seconds(pid) - self.start[pid]) / wall, 2) for pid in self.pids]


def environment(url: str, redis_url: str, latency_ms: int) -> dict:
    env = stack.env(url, REDIS_URL=redis_url, SANDBOX_LATENCY_MS=latency_ms, ALLOW_PRIVATE_WEBHOOK_URLS="1",
                    WEB_CONCURRENCY="1")
    env["PATH"] = f"{stack.BIN}{os.pathsep}{os.environ['PATH']}"
    return env


def fresh(url: str, redis_url: str) -> None:
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    stack.reset_database(url)


def database(url: str):
    import psycopg2

    connection = psycopg2.connect(url)
    connection.autocommit = True
    return connection


def count(url: str, sql: str) -> int:
    with database(url) as connection, connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchone()[0]


def run_jobs(url: str, redis_url: str, env: dict, *, kind: str, processes: int, job: str, queue_name: str,
             done_sql: str, total: int, timeout: float) -> dict:
    """Start `processes` rq processes of Procfile type `kind`, keep one `job` queued per process while
    work is left, and time until `done_sql` counts `total`."""
    import redis
    from rq import Queue, Worker

    connection = redis.Redis.from_url(redis_url)
    queue = Queue(queue_name, connection=connection)
    running = stack.Processes()
    try:
        started = [running.start(f"{kind}{index}", procfile(kind), env) for index in range(processes)]
        stack.wait_for(lambda: len(Worker.all(connection=connection)) >= processes,
                       timeout=60, what=f"{processes} {kind} processes to register")
        meter = CpuMeter([process.pid for process in started])
        began = time.monotonic()
        deadline = began + timeout
        while time.monotonic() < deadline:
            finished = count(url, done_sql)
            if finished >= total:
                break
            if queue.count < processes:
                queue.enqueue(job, result_ttl=0, job_timeout=600)
            time.sleep(0.1)
        elapsed = time.monotonic() - began
        cpu = meter.per_process()
        finished = count(url, done_sql)
    finally:
        running.stop_all()
    return {"processes": processes, "done": finished, "seconds": round(elapsed, 1),
            "per_second": round(finished / elapsed, 1), "cpu_per_process": cpu}


def polls(url: str, redis_url: str, latency_ms: int, processes: int, per_process: int) -> dict:
    """Open invoices with a sandbox deposit address, due, never polled (bench.polls seeds them: the
    steady state of open invoices, each poll a provider read and a reschedule)."""
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    total = per_process * processes
    env = environment(url, redis_url, latency_ms)
    subprocess.run([str(stack.BIN / "python"), "-c", f"from bench.polls import _setup; _setup({total})"],
                   cwd=stack.ROOT, env=env, check=True, timeout=600, capture_output=True)
    return run_jobs(url, redis_url, env, kind="worker", processes=processes, job="jobs.chain.poll_deposits",
                    queue_name="chain", total=total, timeout=180,
                    done_sql="SELECT count(*) FROM poll_state p JOIN invoice i ON i.id = p.invoice_id "
                             "WHERE p.next_poll_at > i.quoted_at")


def deliveries(url: str, redis_url: str, latency_ms: int, processes: int, per_process: int, receiver_port: int,
               concurrency: int) -> dict:
    fresh(url, redis_url)
    env = environment(url, redis_url, latency_ms)
    env["WEBHOOK_CONCURRENCY"] = str(concurrency)
    total = per_process * processes
    # Eight stores with two endpoints each (a run gives one store at most a quarter of its slots, so
    # one store alone would measure that cap), and deliveries due now, made by the app's own fan-out
    # of invoice.created events.
    subprocess.run([str(stack.BIN / "python"), "-c", FAN_OUT % {"count": total // 2 + 1, "port": receiver_port}],
                   cwd=stack.ROOT, env=env, check=True, timeout=600)
    total = count(url, "SELECT count(*) FROM webhook_delivery")
    return run_jobs(url, redis_url, env, kind="webhooks", processes=processes, job="jobs.webhooks.deliver_due",
                    queue_name="webhooks", done_sql="SELECT count(*) FROM webhook_delivery WHERE status = 'succeeded'",
                    total=total, timeout=180)


FAN_OUT = """
import datetime as dt
from decimal import Decimal
import jobs
from core import ids
from core.clock import utcnow
from models.base import db
from services.accounts import stores
from services.engine import invoice_states
from services.webhooks import endpoints, outbox
jobs.ensure_runtime()
with db.connection_context():
    now = utcnow()
    merchants = [stores.create_store(name=f"bench{number}", payout_wallet="bench.near", now=now) for number in range(8)]
    for number, store in enumerate(merchants):
        for path in ("a", "b"):
            endpoints.create_endpoint(store, {"url": f"http://127.0.0.1:%(port)d/{number}{path}", "events": ["*"]},
                                      now=now, allow_private=True)
    for index in range(%(count)d):
        invoice = invoice_states.create(
            now=now, id=ids.new_uuid(), public_id=ids.new_public_id("inv_"), store=merchants[index %% 8].id,
            amount=Decimal("10.00"), currency="USD", order_amount=Decimal("10.00"), order_currency="USD",
            output_asset="usdc.near", external_order_id="bench", expires_at=now + dt.timedelta(hours=1))
        outbox.fan_out(invoice.events.get().id, now=now)
"""


def creates(url: str, redis_url: str, processes: int, seconds: int, connections: int) -> dict:
    fresh(url, redis_url)
    _store, api_key = stack.create_store(url, REDIS_URL=redis_url)
    env = environment(url, redis_url, 0)
    running = stack.Processes()
    try:
        web, base = stack.start_gunicorn(running, "wsgi:app", env, workers=processes, threads=4)
        workers = children(web.pid)
        meter = CpuMeter(workers)
        figures = stack.wrk(f"{base}/v1/invoices", seconds=seconds, connections=connections, api_key=api_key,
                            body='{"amount": "10.00", "currency": "USD"}')
        cpu = meter.per_process()
    finally:
        running.stop_all()
    return {"processes": processes, "per_second": round(figures["rps"], 1), "p99_ms": figures["p99"],
            "non_2xx": figures["non_2xx"], "cpu_per_process": cpu}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency-ms", type=int, default=100)
    parser.add_argument("--processes", default="1,2,4")
    parser.add_argument("--polls-per-process", type=int, default=800)
    parser.add_argument("--deliveries-per-process", type=int, default=800)
    parser.add_argument("--webhook-concurrency", type=int, default=8)
    parser.add_argument("--create-seconds", type=int, default=10)
    parser.add_argument("--create-connections", type=int, default=16)
    parser.add_argument("--only", default="polls,deliveries,creates")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))     # stop what was started (the finally blocks)
    if "creates" in args.only:
        stack.require_wrk()
    url = stack.database_url("tender_bench")
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/6"
    counts = [int(n) for n in args.processes.split(",")]
    port = stack.free_port()
    receiver = subprocess.Popen([sys.executable, "-m", "bench.receiver", str(port), str(args.latency_ms)],
                                cwd=stack.ROOT)
    results: dict[str, list] = {}
    try:
        for n in counts:
            if "polls" in args.only:
                results.setdefault("polls", []).append(polls(url, redis_url, args.latency_ms, n,
                                                              args.polls_per_process))
                print("polls", results["polls"][-1], "load", stack.load(), flush=True)
            if "deliveries" in args.only:
                results.setdefault("deliveries", []).append(deliveries(
                    url, redis_url, args.latency_ms, n, args.deliveries_per_process, port, args.webhook_concurrency))
                print("deliveries", results["deliveries"][-1], "load", stack.load(), flush=True)
            if "creates" in args.only:
                results.setdefault("creates", []).append(creates(url, redis_url, n, args.create_seconds, args.create_connections))
                print("creates", results["creates"][-1], "load", stack.load(), flush=True)
    finally:
        receiver.terminate()
        receiver.wait(10)
    print(f"\nprovider and receiver latency {args.latency_ms} ms; POLL_CONCURRENCY 8, WEBHOOK_CONCURRENCY "
          f"{args.webhook_concurrency}, WEB_THREADS 4; load {stack.load()} (the machine is shared)")
    for kind, rows in results.items():
        base = rows[0]["per_second"] or 1
        for row in rows:
            print(f"{kind:11s} x{row['processes']}: {row['per_second']:8.1f}/s  ({row['per_second'] / base:.2f}x)  "
                  f"CPU per process {row['cpu_per_process']}")


if __name__ == "__main__":
    main()
