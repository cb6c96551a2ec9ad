"""The merchant's books at 1,000,000 invoices: the streamed export against COPY, the web process's
memory while it streams, and the 90-day settlement statement.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/tender_bench REDIS_URL=redis://127.0.0.1:6379/6 \\
        .venv/bin/python -m bench.exports

Seeds N invoices of one store (INSERT … SELECT generate_series, 6 s apart: 1,000,000 span 69 days),
three in five paid two minutes after creation and settled (one settlement transaction each), written
by SQL around the application, so the statement's daily roll-up is then summed from them
(`flask statement rebuild`, timed), then
against one gunicorn worker (1 process, 1 thread):
* GET /v1/exports/invoices over every row, read in 64 KiB pieces, against
  `COPY (SELECT <the same columns> … ORDER BY created_at, id) TO STDOUT WITH CSV` over the same rows, in
  alternated rounds of the same run (goal: the export's throughput >= 0.5 x COPY's);
* the worker's peak resident memory (VmHWM) during the exports minus its resident memory when idle
  after a warm-up request (goal: < 50 MiB);
* GET /v1/reports/settlements for the last 90 days (goal: under 1 s), and EXPLAIN of its query.
The database is emptied first: use a scratch one.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
from pathlib import Path
import statistics
import time

import requests

from bench import stack

COPY_COLUMNS = """
public_id, external_order_id, status, swap_status, amount, currency, order_amount, order_currency, paid_amount,
received_amount, difference_amount, output_asset, customer_id, payment_link_id, transaction_hash, deposit_address,
created_at, updated_at, paid_at, expires_at, metadata"""


def seed_payments(url: str, store_id: str) -> float:
    """Three invoices in five paid and settled, with one settlement transaction each."""
    began = time.perf_counter()
    stack.sql(url, """
        UPDATE invoice SET status = 'paid', paid_at = created_at + interval '2 minutes', paid_amount = amount,
               received_amount = 24.87, difference_amount = -0.13, settled_at = created_at + interval '5 minutes',
               transaction_hash = '0x' || md5(public_id)
        WHERE store_id = %s AND ('x' || substr(md5(public_id), 1, 8))::bit(32)::int %% 5 < 3""", store_id)
    stack.sql(url, """
        INSERT INTO "transaction" (id, public_id, store_id, invoice_id, type, network, token, amount, transaction_hash,
                                   from_wallet, to_wallet, confirmations, status, verified, confirmed_at,
                                   created_at, updated_at)
        SELECT md5('settle' || id)::uuid, 'txn_' || md5('settle' || id), store_id, id, 'settlement', 'near',
               'usdc.near', 24.87, '0xpayout' || md5(id::text), NULL, 'bench.near', NULL, 'confirmed', true,
               settled_at, settled_at, settled_at
        FROM invoice WHERE store_id = %s AND status = 'paid'""", store_id)
    stack.sql(url, 'ANALYZE invoice; ANALYZE "transaction"')
    return time.perf_counter() - began


def rebuild_statement_days(environment: dict) -> float:
    """The rows above were written by SQL, around the application: the statement's daily roll-up
    is summed from them by the same rules (`flask statement rebuild`), as an operator would."""
    import subprocess

    began = time.perf_counter()
    # Paid two minutes and settled five after creation: the last day may be the one after.
    [(first, last)] = stack.sql(environment["DATABASE_URL"],
                                "SELECT MIN(created_at)::date, MAX(created_at)::date + 1 FROM invoice")
    subprocess.run([str(stack.BIN / "flask"), "--app", "wsgi", "statement", "rebuild", "--from", str(first),
                    "--to", str(last)], cwd=stack.ROOT, env=environment, check=True, capture_output=True, text=True)
    return time.perf_counter() - began


def reuse_store(url: str, environment: dict) -> tuple[str, str]:
    """The store an earlier run seeded, and a new key of it."""
    import json
    import subprocess

    store_id = str(stack.sql(url, "SELECT id FROM store WHERE name = 'Bench'")[0][0])
    created = subprocess.run([str(stack.BIN / "flask"), "--app", "wsgi", "keys", "create", "--store", store_id,
                              "--json"], cwd=stack.ROOT, env=environment, check=True, capture_output=True, text=True)
    return store_id, json.loads(created.stdout.strip().splitlines()[-1])["api_key"]


def worker_pid(master_pid: int) -> int:
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(master_pid):
            return int(status.parent.name)
    raise RuntimeError("no gunicorn worker found")


def memory_kib(pid: int) -> dict:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {key: int(value.split()[0]) for key, value in (line.split(":\t", 1) for line in lines if ":\t" in line)
            if key in ("VmRSS", "VmHWM")}


def timed_download(target: str, api_key: str) -> tuple[float, int, int]:
    """(seconds, bytes, lines) of one streamed export."""
    began = time.perf_counter()
    size = lines = 0
    with requests.get(target, headers={"Authorization": f"Bearer {api_key}"}, stream=True, timeout=600) as response:
        assert response.status_code == 200, response.text[:300]
        for piece in response.iter_content(65536):
            size += len(piece)
            lines += piece.count(b"\n")
    return time.perf_counter() - began, size, lines


class _Counter:
    def __init__(self):
        self.size = 0
        self.lines = 0

    def write(self, data):
        self.size += len(data)
        self.lines += data.count("\n") if isinstance(data, str) else data.count(b"\n")


def timed_copy(url: str, store_id: str, start: dt.datetime, end: dt.datetime, *,
               json_lines: bool = False) -> tuple[float, int, int]:
    """COPY of the same rows' raw columns: as CSV, or (`json_lines`) as the database's own JSON of
    each row, the baseline of the JSON Lines export (JSON text is 2.5 times the CSV's bytes)."""
    import psycopg2

    connection = psycopg2.connect(url)
    try:
        sink = _Counter()
        began = time.perf_counter()
        with connection.cursor() as cursor:
            query = cursor.mogrify(f"SELECT {COPY_COLUMNS} FROM invoice WHERE store_id = %s AND created_at >= %s "
                                   "AND created_at < %s ORDER BY created_at, id", (store_id, start, end)).decode()
            if json_lines:
                query = f"SELECT row_to_json(r) FROM ({query}) AS r"
            cursor.copy_expert(f"COPY ({query}) TO STDOUT " + ("" if json_lines else "WITH CSV HEADER"), sink)
        return time.perf_counter() - began, sink.size, sink.lines
    finally:
        connection.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--invoices", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--statements", type=int, default=5)
    parser.add_argument("--reuse", action="store_true", help="keep the rows a previous run seeded")
    args = parser.parse_args()
    url = stack.database_url("tender_bench")
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/6"
    environment = stack.env(url, REDIS_URL=redis_url, SWAP_PROVIDER="sandbox")
    if args.reuse:
        store_id, api_key = reuse_store(url, environment)
    else:
        stack.reset_database(url)
        store_id, api_key = stack.create_store(url, REDIS_URL=redis_url, SWAP_PROVIDER="sandbox")
        print(f"inserted {args.invoices} invoices in {stack.bulk_invoices(url, store_id, args.invoices):.1f} s, "
              f"paid and settled 3 in 5 in {seed_payments(url, store_id):.1f} s, "
              f"statement days summed in {rebuild_statement_days(environment):.1f} s")
    end = dt.datetime.utcnow().replace(microsecond=0) + dt.timedelta(days=1)
    start = end - dt.timedelta(days=366)
    processes = stack.Processes()
    try:
        # One thread would make gunicorn a `sync` worker, whose 30 s timeout cuts a long export:
        # the web process runs threaded workers (docs/exports.md). The export is the only request.
        master, base = stack.start_gunicorn(processes, "wsgi:app", environment, workers=1, threads=2)
        pid = worker_pid(master.pid)
        window = f"created_after={start.isoformat()}Z&created_before={end.isoformat()}Z"
        timed_download(f"{base}/v1/exports/invoices?{window}&status=pending", api_key)     # warm: imports, pool
        idle = memory_kib(pid)["VmRSS"]
        runs = {"export csv": [], "export jsonl": [], "COPY csv": [], "COPY jsonl": []}
        for _ in range(args.rounds):       # alternated, so load from elsewhere hits both alike
            runs["COPY csv"].append(timed_copy(url, store_id, start, end))
            runs["COPY jsonl"].append(timed_copy(url, store_id, start, end, json_lines=True))
            runs["export csv"].append(timed_download(f"{base}/v1/exports/invoices?{window}", api_key))
            runs["export jsonl"].append(timed_download(f"{base}/v1/exports/invoices?{window}&format=jsonl", api_key))
        peak = memory_kib(pid)["VmHWM"]
        today = dt.date.today()
        statement_url = (f"{base}/v1/reports/settlements?from={today - dt.timedelta(days=89)}&to={today}")
        statement_seconds, days = [], 0
        for _ in range(args.statements):
            began = time.perf_counter()
            response = requests.get(statement_url, headers={"Authorization": f"Bearer {api_key}"}, timeout=60)
            statement_seconds.append(time.perf_counter() - began)
            assert response.status_code == 200, response.text[:300]
            days = len(response.json()["data"])
    finally:
        processes.stop_all()
    plan = explain(url, store_id, today - dt.timedelta(days=89), today)
    print(f"{args.invoices} invoices, one gunicorn worker (2 threads, one request at a time), {args.rounds} alternated rounds (medians)")
    for name, figures in runs.items():
        seconds = statistics.median(run[0] for run in figures)
        rows = figures[0][2] - (0 if name.endswith("jsonl") else 1)     # CSV files start with a header line
        print(f"  {name:12}: {seconds:6.2f} s  {rows / seconds:9.0f} rows/s  {figures[0][1] / seconds / 2**20:6.1f} MiB/s"
              f"  ({rows} rows, {figures[0][1] / 2**20:.0f} MiB)")
    copy_seconds = statistics.median(run[0] for run in runs["COPY csv"])
    for name in ("export csv", "export jsonl"):
        ratio = copy_seconds / statistics.median(run[0] for run in runs[name])
        print(f"  {name} throughput : COPY csv = {ratio:.2f} (goal >= 0.5)")
    ratio = statistics.median(run[0] for run in runs["COPY jsonl"]) / statistics.median(
        run[0] for run in runs["export jsonl"])
    print(f"  export jsonl throughput : COPY jsonl (the database's own JSON of the rows) = {ratio:.2f}")
    print(f"  web worker memory: idle {idle / 1024:.1f} MiB, peak {peak / 1024:.1f} MiB, "
          f"growth {(peak - idle) / 1024:.1f} MiB (goal < 50)")
    print(f"  statement, 90 days ({days} day rows): median {statistics.median(statement_seconds) * 1000:.0f} ms, "
          f"max {max(statement_seconds) * 1000:.0f} ms (goal < 1000)")
    print("  plan:\n" + "\n".join("    " + line for line in plan))


def explain(url: str, store_id: str, first: dt.date, last: dt.date) -> list[str]:
    """The plan of the statement's query on PostgreSQL: the daily roll-up plus the live counts."""
    import peewee as pw

    from services.books import reports

    since, until = dt.datetime.combine(first, dt.time()), dt.datetime.combine(last + dt.timedelta(days=1), dt.time())
    rows = stack.sql(url, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + reports.statement_sql(pw.PostgresqlDatabase(None)),
                     *reports.statement_params(store_id, since, until))
    return [row[0] for row in rows]


if __name__ == "__main__":
    main()
