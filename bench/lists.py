"""Get and list invoices at 1,000,000 invoices: page 5,000 against page 1, same server, same run.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/tender_bench .venv/bin/python -m bench.lists

Bulk-inserts N invoices of one store (one INSERT … SELECT), computes the cursor of page P with one
query (OFFSET, once, outside the measurement), then measures with wrk against one gunicorn:
GET /v1/invoices?limit=L (page 1), GET /v1/invoices?limit=L&starting_after=<cursor> (page P), and
GET /v1/invoices/{id} of a row deep in the table, in alternated rounds. Goal: page P's p50 <= 1.5 x page 1's.
The database is emptied first: use a scratch one.
"""
from __future__ import annotations

import os
import statistics

from bench import int_options, stack


def main() -> None:
    args = int_options(invoices=1_000_000, page=5000, limit=20, seconds=3, rounds=3, connections=4)
    stack.require_wrk()
    url = stack.database_url()
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/6"
    environment = stack.env(url, REDIS_URL=redis_url)
    stack.reset_database(url)
    store_id, api_key = stack.create_store(url, REDIS_URL=redis_url)
    took = stack.bulk_invoices(url, store_id, args.invoices)
    print(f"inserted {args.invoices} invoices in {took:.1f} s")
    offset = (args.page - 1) * args.limit - 1          # the last row of page P-1 is page P's cursor
    cursor = stack.sql(url, "SELECT public_id FROM invoice WHERE store_id = %s ORDER BY created_at DESC, id DESC "
                            "OFFSET %s LIMIT 1", store_id, offset)[0][0]
    deep = stack.sql(url, "SELECT public_id FROM invoice WHERE store_id = %s ORDER BY created_at "
                          "LIMIT 1", store_id)[0][0]
    processes = stack.Processes()
    try:
        _web, base = stack.start_gunicorn(processes, "wsgi:app", environment, workers=2, threads=4)
        first_url = f"{base}/v1/invoices?limit={args.limit}"
        deep_url = f"{first_url}&starting_after={cursor}"
        import requests

        page = requests.get(deep_url, headers={"Authorization": f"Bearer {api_key}"}, timeout=10).json()
        assert len(page["data"]) == args.limit and page["has_more"], page
        runs = {}
        targets = (("page 1", first_url), (f"page {args.page}", deep_url), ("get one", f"{base}/v1/invoices/{deep}"))
        for name, target in targets:
            stack.wrk(target, seconds=1, connections=args.connections, api_key=api_key)     # warm
        # Alternated rounds, so a burst of load from elsewhere on the machine hits every target alike.
        for _ in range(args.rounds):
            for name, target in targets:
                figures = stack.wrk(target, seconds=args.seconds, connections=args.connections, api_key=api_key)
                assert figures["non_2xx"] == 0, (name, figures)
                runs.setdefault(name, []).append(figures)
        results = {name: {key: statistics.median(run[key] for run in figures) for key in ("rps", "p50", "p99")}
                   for name, figures in runs.items()}
    finally:
        processes.stop_all()
    print(f"{args.invoices} invoices, limit {args.limit}, gunicorn 2 x 4, wrk {args.connections} connections "
          f"{args.seconds} s x {args.rounds} alternated rounds (medians)")
    for name, figures in results.items():
        print(f"  {name:10}: {figures['rps']:7.1f} req/s  p50 {figures['p50']:6.2f} ms  p99 {figures['p99']:6.2f} ms")
    first, deep_page = results["page 1"], results[f"page {args.page}"]
    print(f"page {args.page} : page 1 = {deep_page['p50'] / first['p50']:.2f} (p50), "
          f"{first['rps'] / deep_page['rps']:.2f} (throughput) (goal <= 1.5)")


if __name__ == "__main__":
    main()
