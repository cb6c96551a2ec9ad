"""/health and an invoice create beside 50 slow clients, on the `web` process as the Procfile runs it
(gunicorn.conf.py: its worker class, and its 2 workers x 4 threads unless WEB_CONCURRENCY /
WEB_THREADS say otherwise), in alternated rounds without and with the slow clients.

    .venv/bin/python -m bench.slow_clients [--quick]          # a temporary SQLite file and fakeredis
    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/tender_bench REDIS_URL=redis://127.0.0.1:6379/6 \\
        .venv/bin/python -m bench.slow_clients

Slow clients: `--slow-clients` connections from as many addresses (127.0.1.1, 127.0.1.2, …) and
`--one-address` more from 127.0.0.2 (more than the per-client bound of all processes together, so
some are refused 429 at once), each sending a POST's head one header line every `--line-every`
seconds and never the empty line that ends it. The header deadline (REQUEST_HEADER_TIMEOUT_SECONDS)
answers each 408 and it connects again at once (a refused one after `--line-every`), so they stay
open throughout. Measured: `--requests` GET /health and as many POST /v1/invoices (an API key made
with `flask stores create`), alternately, one every `--interval-ms`, each on a new connection from
127.0.0.1, from the connect to the last byte of the answer. At the defaults a phase lasts longer
than a header deadline, so it sees slow clients answered and back. Goal: loaded p99 under 1 s for
both (docs/security.md); the ratio is loaded / baseline of the same run. Rate limits are off
(docs/api.md#rate-limits). The database is emptied first: use a scratch one.
"""
from __future__ import annotations

import argparse
from contextlib import contextmanager
import math
import os
import runpy
import signal
import socket
import sys
import tempfile
import time

from bench import stack
from bench.payflow import procfile
from tests.support.processes import healthy
from tests.support.raw_http import post_head, read_answer
from tests.support.slow_clients import SLOW_HEAD, Trickler, connect

HEALTH = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
CREATE_BODY = b'{"amount": "5.00", "currency": "USD"}'
MEASURED_FROM = "127.0.0.1"
ONE_ADDRESS = "127.0.0.2"
ANSWER_WAIT_SECONDS = 30        # a starved request shows as a figure this long, or fails, not hangs
GOAL_SECONDS = 1.0


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3, help="alternated baseline / loaded rounds")
    parser.add_argument("--requests", type=int, default=60, help="/health and as many creates a phase")
    parser.add_argument("--interval-ms", type=int, default=100, help="one measured request every this long")
    parser.add_argument("--slow-clients", type=int, default=50, help="slow clients, one address each")
    parser.add_argument("--one-address", type=int, default=20, help="more slow clients, all from 127.0.0.2")
    parser.add_argument("--line-every", type=float, default=4.0, help="seconds between a slow client's lines")
    parser.add_argument("--quick", action="store_true", help="one round (one phase of each)")
    args = parser.parse_args()
    if args.quick:
        args.rounds = 1
    return args


def web_shape() -> dict:
    """What gunicorn.conf.py gives the `web` process in this environment."""
    from config import Settings

    conf = runpy.run_path(str(stack.ROOT / "gunicorn.conf.py"))
    default = Settings()
    return {"workers": conf["workers"], "threads": conf["threads"], "worker_class": conf["worker_class"],
            "header_seconds": int(os.environ.get("REQUEST_HEADER_TIMEOUT_SECONDS",
                                                 default.request_header_timeout_seconds)),
            "per_client": int(os.environ.get("ARRIVING_REQUESTS_PER_CLIENT", default.arriving_requests_per_client))}


def start_web(processes: stack.Processes, environment: dict) -> int:
    port = stack.free_port()
    web = processes.start("web", procfile("web"), {**environment, "HOST": "127.0.0.1", "PORT": str(port)})

    def up():
        if web.poll() is not None:
            raise RuntimeError(f"web exited; see {processes.log_dir}/web.log")
        return healthy(f"http://127.0.0.1:{port}")

    stack.wait_for(up, timeout=60, what="web to answer /health")
    return port


def timed(port: int, request: bytes, expected: bytes) -> float | None:
    """Seconds from connect to the whole answer, on a new connection; None if the answer was not
    `expected` or never came."""
    began = time.perf_counter()
    try:
        with connect(port, MEASURED_FROM, timeout=ANSWER_WAIT_SECONDS) as sock:
            sock.sendall(request)
            answer = read_answer(sock)
    except OSError:
        return None
    return time.perf_counter() - began if answer.startswith(b"HTTP/1.1 " + expected) else None


def phase(port: int, api_key: str, args, crowd: Trickler | None = None) -> dict:
    """`--requests` of each, alternately, paced; with `crowd`, the fewest of its connections open."""
    create = post_head("/v1/invoices", api_key, Content_Length=len(CREATE_BODY)) + CREATE_BODY
    figures = {"health": [], "create": [], "failed": 0, "open_min": None}
    for index in range(2 * args.requests):
        began = time.monotonic()
        kind, request, expected = ("health", HEALTH, b"200") if index % 2 == 0 else ("create", create, b"201")
        seconds = timed(port, request, expected)
        if seconds is None:
            figures["failed"] += 1
        else:
            figures[kind].append(seconds)
        if crowd is not None:
            open_now = crowd.open_count()
            figures["open_min"] = open_now if figures["open_min"] is None else min(figures["open_min"], open_now)
        time.sleep(max(0.0, began + args.interval_ms / 1000 - time.monotonic()))
    return figures


@contextmanager
def slow_clients(port: int, args):
    """The crowd, connected and sending, kept open by its Trickler until the block ends."""
    addresses = [f"127.0.{1 + n // 250}.{1 + n % 250}" for n in range(args.slow_clients)]
    addresses += [ONE_ADDRESS] * args.one_address
    sockets: list[socket.socket] = []
    crowd = None
    try:
        for address in addresses:
            sockets.append(connect(port, address, timeout=ANSWER_WAIT_SECONDS))
            try:
                sockets[-1].sendall(SLOW_HEAD)
            except OSError:
                pass            # refused (429) already: the Trickler reads that and connects again
        crowd = Trickler(sockets, every=args.line_every, for_at_most=600, reconnect_to=port)
        with crowd:
            yield crowd
    finally:
        for sock in (crowd.sockets if crowd else sockets):
            sock.close()


def percentiles(samples: list[float]) -> dict:
    """p50, p99 (nearest rank: of 180 samples, the second slowest) and max."""
    ordered = sorted(samples) or [math.nan]

    def rank(fraction: float) -> float:
        return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]

    return {"p50": rank(0.50), "p99": rank(0.99), "max": ordered[-1], "n": len(samples)}


def ms(seconds: float) -> str:
    return f"{seconds * 1000:6.1f} ms"


def describe(figures: dict) -> str:
    text = "  ".join(f"{kind} p50 {ms(p['p50'])} p99 {ms(p['p99'])}"
                     for kind, p in ((k, percentiles(figures[k])) for k in ("health", "create")))
    return f"{text}  failed {figures['failed']}  load {stack.load()}"


def report(rounds: list[dict]) -> None:
    for kind, label in (("health", "/health"), ("create", "create ")):
        base = percentiles([s for r in rounds for s in r["baseline"][kind]])
        loaded = percentiles([s for r in rounds for s in r["loaded"][kind]])
        met = "met" if loaded["p99"] < GOAL_SECONDS else "NOT met"
        print(f"{label}: baseline p50 {ms(base['p50'])} p99 {ms(base['p99'])} max {ms(base['max'])} (n {base['n']})"
              f" | loaded p50 {ms(loaded['p50'])} p99 {ms(loaded['p99'])} max {ms(loaded['max'])} (n {loaded['n']})"
              f" | loaded/baseline p50 {loaded['p50'] / base['p50']:.2f}x p99 {loaded['p99'] / base['p99']:.2f}x"
              f" | loaded p99 {ms(loaded['p99']).strip()} against the goal < 1000 ms: {met}")
    failed = sum(r[name]["failed"] for r in rounds for name in ("baseline", "loaded"))
    print(f"failed or unanswered measured requests: {failed}")


def backend() -> tuple[str, str]:
    """The database URL (DATABASE_URL, or a new SQLite file) and its description."""
    url = os.environ.get("DATABASE_URL") or f"sqlite:///{tempfile.mkdtemp(prefix='tender-bench-')}/bench.db"
    database = "PostgreSQL" if url.startswith("postgres") else "SQLite"
    return url, f"{database} + {'Redis' if os.environ.get('REDIS_URL') else 'fakeredis'}"


def run_rounds(port: int, api_key: str, args) -> list[dict]:
    rounds = []
    for number in range(args.rounds):
        results = {}
        for name in (("baseline", "loaded") if number % 2 == 0 else ("loaded", "baseline")):
            if name == "baseline":
                results[name] = phase(port, api_key, args)
            else:
                with slow_clients(port, args) as crowd:
                    results[name] = phase(port, api_key, args, crowd)
                    answers = dict(crowd.answers)
                results[name]["answers"] = answers
            extra = (f"  slow open >= {results[name]['open_min']}/{args.slow_clients + args.one_address}"
                     f"  slow answered {results[name]['answers']}" if name == "loaded" else "")
            print(f"round {number + 1} {name:8}: {describe(results[name])}{extra}", flush=True)
        rounds.append(results)
    return rounds


def main() -> None:
    args = options()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))      # stop what was started (the finally)
    url, described = backend()
    stack.reset_database(url)
    _store, api_key = stack.create_store(url)
    shape = web_shape()
    print(f"web: {shape['workers']} workers x {shape['threads']} threads, {shape['worker_class']}, {described}; "
          f"header deadline {shape['header_seconds']} s, {shape['per_client']} arriving per client per process; "
          f"slow clients: {args.slow_clients} addresses + {args.one_address} from {ONE_ADDRESS}, a header line "
          f"every {args.line_every:g} s; measured: {args.requests} /health + {args.requests} creates a phase, "
          f"one every {args.interval_ms} ms, from {MEASURED_FROM}", flush=True)
    processes = stack.Processes()
    try:
        port = start_web(processes, stack.env(url))
        phase(port, api_key, argparse.Namespace(requests=10, interval_ms=0))      # warm both workers
        rounds = run_rounds(port, api_key, args)
    finally:
        processes.stop_all()
    report(rounds)


if __name__ == "__main__":
    main()
