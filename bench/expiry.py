"""The expiry sweep with 1,000 due invoices among 10,000 and among 1,000,000, same run, same database.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/tender_bench .venv/bin/python -m bench.expiry

Each table holds the due invoices (`pending`, expired a minute ago), open invoices not yet due (one
in ten of the rest) and closed history (`paid`, `expired`, `cancelled`, long past their deadline).
The sweep is the job itself (`jobs.maintenance.sweep_expired_invoices`, called in-process); the
small table is the baseline. Goal: the large table's sweep <= 2 x the small table's.
The database is emptied first: use a scratch one.
"""
from __future__ import annotations

import os
import time

from bench import int_options, stack

STATUS = ("CASE WHEN i <= {due} THEN 'pending' WHEN mod(i, 10) = 0 THEN 'awaiting_payment' "
          "ELSE (ARRAY['paid', 'expired', 'cancelled'])[1 + mod(i, 3)] END")
EXPIRES = ("CASE WHEN i <= {due} THEN now() AT TIME ZONE 'utc' - interval '1 minute' "
           "WHEN mod(i, 10) = 0 THEN now() AT TIME ZONE 'utc' + interval '1 hour' "
           "ELSE now() AT TIME ZONE 'utc' - i * interval '6 seconds' END")


def sweep(url: str, store_id: str, total: int, due: int) -> tuple[float, float]:
    stack.sql(url, "TRUNCATE invoice CASCADE")
    took = stack.bulk_invoices(url, store_id, total, status_sql=STATUS.format(due=due),
                               expires_sql=EXPIRES.format(due=due))
    from jobs.maintenance import sweep_expired_invoices

    began = time.perf_counter()
    expired = sweep_expired_invoices()
    elapsed = time.perf_counter() - began
    assert expired == due, (expired, due)
    return took, elapsed


def main() -> None:
    args = int_options(due=1000, small=10_000, large=1_000_000)
    url = stack.database_url()
    os.environ.update(stack.env(url, REDIS_URL=os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/6"))
    stack.reset_database(url)
    store_id, _key = stack.create_store(url)
    import jobs

    jobs.ensure_runtime()
    results = {}
    for total in (args.small, args.large, args.small):      # small twice: warm and cold caches both seen
        took, elapsed = sweep(url, store_id, total, args.due)
        results.setdefault(total, []).append(elapsed)
        print(f"  {args.due} due among {total:>9,}: sweep {elapsed:6.2f} s ({args.due / elapsed:6.0f} invoices/s); "
              f"insert took {took:.1f} s")
    small, large = min(results[args.small]), min(results[args.large])
    print(f"expiry sweep: {large:.2f} s among {args.large:,} vs {small:.2f} s among {args.small:,}: "
          f"ratio {large / small:.2f} (goal <= 2)")


if __name__ == "__main__":
    main()
