"""Create-invoice throughput and latency under gunicorn with wrk, beside a bare Flask + peewee endpoint
doing the same inserts (bench/bare_app.py), same gunicorn config, same database, same run.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/tender_bench .venv/bin/python -m bench.create_invoice
    … -m bench.create_invoice --sweep        # also try several workers x threads (docs/performance.md)

Rate limits are off (docs/api.md#rate-limits: `off` is for benchmarks); REDIS_URL is needed (the outbox nudge
and the metrics go to Redis as in production). The database is emptied first: use a scratch one.
Goal: Tender >= 60% of the bare endpoint's requests/s.
"""
from __future__ import annotations

import argparse
import os

from bench import stack

BODY = '{"amount":"25.00","currency":"USD","external_order_id":"bench-1","metadata":{"cart":"42"}}'


def measure(processes, app: str, environment: dict, *, workers: int, threads: int, seconds: int,
            connections: int, api_key: str = "") -> dict:
    process, base = stack.start_gunicorn(processes, app, environment, workers=workers, threads=threads)
    try:
        stack.wrk(f"{base}/v1/invoices", seconds=2, connections=connections, api_key=api_key, body=BODY)  # warm
        result = stack.wrk(f"{base}/v1/invoices", seconds=seconds, connections=connections, api_key=api_key,
                           body=BODY)
        return {**result, "load": stack.load()}
    finally:
        processes.stop(process)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2, help="alternate ours and bare this many times")
    parser.add_argument("--sweep", action="store_true", help="also measure several workers x threads")
    args = parser.parse_args()
    stack.require_wrk()
    url = stack.database_url()
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/6"
    stack.reset_database(url)
    environment = stack.env(url, REDIS_URL=redis_url)
    _store, api_key = stack.create_store(url, REDIS_URL=redis_url)
    workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
    threads = int(os.environ.get("WEB_THREADS", "4"))
    processes = stack.Processes()
    try:
        if args.sweep:
            print(f"workers x threads sweep, {args.connections} connections, {args.seconds} s each:")
            for w, t in ((1, 4), (1, 8), (2, 2), (2, 4), (2, 8), (3, 4), (4, 2)):
                ours = measure(processes, "wsgi:app", environment, workers=w, threads=t, seconds=args.seconds,
                               connections=args.connections, api_key=api_key)
                print(f"  {w} x {t}: {ours['rps']:7.1f} req/s  p50 {ours['p50']:6.1f} ms  p99 {ours['p99']:6.1f} ms"
                      f"  non-2xx {ours['non_2xx']}")
        results = {"tender": [], "bare": []}
        for _ in range(args.rounds):
            results["tender"].append(measure(processes, "wsgi:app", environment, workers=workers, threads=threads,
                                             seconds=args.seconds, connections=args.connections, api_key=api_key))
            results["bare"].append(measure(processes, "bench.bare_app:create_app()", environment, workers=workers,
                                           threads=threads, seconds=args.seconds, connections=args.connections))
    finally:
        processes.stop_all()
    print(f"gunicorn {workers} workers x {threads} threads, wrk 2 threads {args.connections} connections "
          f"{args.seconds} s, PostgreSQL + Redis, rate limits off")
    for name, runs in results.items():
        for run in runs:
            print(f"  {name:6}: {run['rps']:7.1f} req/s  p50 {run['p50']:6.1f} ms  p99 {run['p99']:6.1f} ms  "
                  f"non-2xx {run['non_2xx']}  load {run['load']}")
    ours = sum(r["rps"] for r in results["tender"]) / args.rounds
    bare = sum(r["rps"] for r in results["bare"]) / args.rounds
    p99_ours = sum(r["p99"] for r in results["tender"]) / args.rounds
    p99_bare = sum(r["p99"] for r in results["bare"]) / args.rounds
    print(f"create invoice: tender {ours:.1f} req/s, bare {bare:.1f} req/s, ratio {ours / bare:.2f} (goal >= 0.60); "
          f"p99 {p99_ours / p99_bare:.2f}x the bare p99 (goal <= 1.5)")


if __name__ == "__main__":
    main()
