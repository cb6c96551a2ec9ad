"""Every dashboard page at 1,000,000 invoices in one store, against the API's invoice list on the
same rows, same server, same run.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/tender_bench REDIS_URL=redis://127.0.0.1:6379/6 \\
        .venv/bin/python -m bench.dashboard_pages

Seeds one store with N invoices and everything around them (bench/dashboard_seed.py: 3 in 5 paid
and settled, events, deliveries with attempts, refunds, payment links, audit entries, the
settlement roll-up summed by `flask statement rebuild`) and a second store with N/20 of the same
(whose rows every page must leave out). Then, against one gunicorn (2 x 4), an owner signed in
through an invitation as a browser would be, wrk measures each dashboard GET page and
GET /v1/invoices?limit=25 (the dashboard's page size), in alternated rounds: the API list runs
before every fourth page, so a burst of load from elsewhere hits the baseline as it hits the pages.
Goal: each page's p99 <= 1.5 x the API list's p99 (the median of its runs). The plans of the home
page's queries are printed after the figures: the totals read `settlement_day`, never `invoice`.
The database is emptied first: use a scratch one.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import statistics
import subprocess
import time

from bench import dashboard_seed, stack

EMAIL = "owner@bench.example"
PASSWORD = "a bench password, long enough"
PAGE_SIZE = 25
GOAL = 1.5
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--invoices", type=int, default=1_000_000)
    parser.add_argument("--deep-page", type=int, default=5000, help="the keyset page measured beside page 1")
    parser.add_argument("--deliveries", type=int, default=200_000, help="deliveries of the newest events")
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--check", action="store_true", help="each page once, no wrk: the smoke test's mode")
    parser.add_argument("--reuse", action="store_true", help="keep the rows and the owner a previous run made")
    parser.add_argument("--pages", help="measure only these pages, comma-separated names (the API list always)")
    return parser.parse_args()


def seed(url: str, environment: dict, args) -> tuple[str, str, str]:
    """(store id, its API key, the second store's id), every row written."""
    redis_url = environment["REDIS_URL"]
    stack.reset_database(url)
    store_id, api_key = stack.create_store(url, REDIS_URL=redis_url)
    other_id, _ = stack.create_store(url, REDIS_URL=redis_url)
    began = time.perf_counter()
    took = dashboard_seed.store(url, environment, store_id, tag="a", invoices_count=args.invoices,
                                deliveries=min(args.deliveries, args.invoices), audit_entries=2000)
    dashboard_seed.store(url, environment, other_id, tag="b", invoices_count=max(args.invoices // 20, 100),
                         deliveries=min(args.deliveries, args.invoices) // 20,
                         audit_entries=max(args.invoices // 50, 100))
    took.update(dashboard_seed.finish(url, environment))
    print(f"seeded in {time.perf_counter() - began:.0f} s: "
          + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in took.items()) + " (the first store)")
    return store_id, api_key, other_id


def reused(url: str, environment: dict) -> tuple[str, str, str]:
    """The stores an earlier run seeded (the owner's first, by its member), and a new key of it."""
    store_id = str(stack.sql(url, "SELECT store_id FROM membership")[0][0])
    other_id = str(stack.sql(url, "SELECT id FROM store WHERE id <> %s", store_id)[0][0])
    made = subprocess.run([str(stack.BIN / "flask"), "--app", "wsgi", "keys", "create", "--store", store_id, "--json"],
                          cwd=stack.ROOT, env=environment, check=True, capture_output=True, text=True)
    return store_id, json.loads(made.stdout.strip().splitlines()[-1])["api_key"], other_id


def signed_in_cookie(base: str, environment: dict, store_id: str, *, reuse: bool = False) -> str:
    """The session cookie of the store's owner, who accepted an invitation in a browser (or, on a
    reused database, signs in with the password given then)."""
    import requests

    if reuse:
        browser = requests.Session()
        token = _CSRF.search(browser.get(base + "/dashboard/login", timeout=30).text).group(1)
        answer = browser.post(base + "/dashboard/login", data={"email": EMAIL, "password": PASSWORD,
                                                               "csrf_token": token}, allow_redirects=False, timeout=30)
        assert answer.status_code == 302, (answer.status_code, answer.text[:300])
        return browser.cookies.get("tender_dashboard", path="/dashboard")
    made = subprocess.run([str(stack.BIN / "flask"), "--app", "wsgi", "users", "invite", "--store", store_id,
                           "--email", EMAIL, "--role", "owner", "--json"], cwd=stack.ROOT, env=environment,
                          check=True, capture_output=True, text=True)
    path = "/dashboard/" + json.loads(made.stdout.strip().splitlines()[-1])["invitation_url"].split("/dashboard/", 1)[1]
    browser = requests.Session()
    token = _CSRF.search(browser.get(base + path, timeout=30).text).group(1)
    answer = browser.post(base + path, data={"password": PASSWORD, "password_again": PASSWORD, "csrf_token": token},
                          allow_redirects=False, timeout=30)
    assert answer.status_code == 302, (answer.status_code, answer.text[:300])
    return browser.cookies.get("tender_dashboard", path="/dashboard")


def pages(url: str, store_id: str, args) -> dict[str, str]:
    """Each dashboard GET page, by name, with the ids of real rows of the store."""
    def one(query, *params):
        return stack.sql(url, query, *params)[0][0]

    newest = "WHERE store_id = %s ORDER BY created_at DESC, id DESC"
    cursor = one(f"SELECT public_id FROM invoice {newest} OFFSET %s LIMIT 1", store_id,
                 (args.deep_page - 1) * PAGE_SIZE - 1)
    # A refunded invoice, with its event's delivery if it has one: the fullest page of one invoice.
    invoice = one("SELECT i.public_id FROM invoice i JOIN refund r ON r.invoice_id = i.id "
                  "JOIN event e ON e.invoice_id = i.id LEFT JOIN webhook_delivery d ON d.event_id = e.id "
                  "WHERE i.store_id = %s ORDER BY d.id IS NULL, r.created_at DESC LIMIT 1", store_id)
    order = f"order-{args.invoices // 2}"                 # dashboard_seed: invoice i's order is order-i
    endpoint = one("SELECT public_id FROM webhook_endpoint WHERE store_id = %s ORDER BY name LIMIT 1", store_id)
    delivery = one(f"SELECT public_id FROM webhook_delivery {newest} OFFSET %s LIMIT 1", store_id,
                   min(1000, args.deliveries // 2))
    return {"home": "/dashboard/", "invoices": "/dashboard/invoices",
            f"invoices p.{args.deep_page}": f"/dashboard/invoices?starting_after={cursor}",
            "invoices ?status": "/dashboard/invoices?status=underpaid",
            "invoices ?q=order": f"/dashboard/invoices?q={order}",
            "one invoice": f"/dashboard/invoices/{invoice}", "payment links": "/dashboard/payment-links",
            "refunds": "/dashboard/refunds", "refunds ?status": "/dashboard/refunds?status=awaiting_funds",
            "webhooks": "/dashboard/webhooks",
            "an endpoint": f"/dashboard/webhooks/{endpoint}", "a delivery": f"/dashboard/webhooks/deliveries/{delivery}",
            "api keys": "/dashboard/api-keys", "settings": "/dashboard/settings", "team": "/dashboard/team",
            "books": "/dashboard/books", "integrations": "/dashboard/integrations", "audit": "/dashboard/audit"}


def check_pages(base: str, targets: dict, cookie: str, api_key: str, other_marks: list[str]) -> None:
    """Each page answers 200, shows rows, and nothing of the other store."""
    import requests

    for name, path in targets.items():
        answer = requests.get(base + path, cookies={"tender_dashboard": cookie}, timeout=60, allow_redirects=False)
        assert answer.status_code == 200, (name, answer.status_code, answer.text[:300])
        leaked = [mark for mark in other_marks if mark in answer.text]
        assert not leaked, (name, leaked)
    listed = requests.get(f"{base}/v1/invoices?limit={PAGE_SIZE}", headers={"Authorization": f"Bearer {api_key}"},
                          timeout=60)
    assert listed.status_code == 200 and len(listed.json()["data"]) == PAGE_SIZE, listed.text[:300]


def measure(base: str, targets: dict, cookie: str, api_key: str, args) -> dict:
    api = f"{base}/v1/invoices?limit={PAGE_SIZE}"
    headers = {"Cookie": f"tender_dashboard={cookie}"}

    def run(target, **auth):
        figures = stack.wrk(target, seconds=args.seconds, connections=args.connections, **auth)
        assert figures["non_2xx"] == 0 and not figures["errors"], (target, figures)
        return figures

    for path in targets.values():                 # warm: imports, templates, the pool, the caches
        stack.wrk(base + path, seconds=1, connections=args.connections, headers=headers)
    stack.wrk(api, seconds=1, connections=args.connections, api_key=api_key)
    runs: dict[str, list] = {}
    for _ in range(args.rounds):
        for number, (name, path) in enumerate(targets.items()):
            if number % 4 == 0:
                runs.setdefault("API list", []).append(run(api, api_key=api_key))
            runs.setdefault(name, []).append(run(base + path, headers=headers))
    return {name: {key: statistics.median(run[key] for run in figures) for key in ("rps", "p50", "p99")}
            for name, figures in runs.items()}


def report(results: dict, args, load_before: str) -> None:
    print(f"{args.invoices} invoices in the store, gunicorn 2 x 4, wrk {args.connections} connections, "
          f"{args.seconds} s x {args.rounds} alternated rounds (medians), load {load_before} -> {stack.load()}")
    baseline = results["API list"]
    print(f"  {'page':20} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>7}  p99 : API p99")
    for name, figures in results.items():
        ratio = figures["p99"] / baseline["p99"]
        verdict = "" if name == "API list" else ("  ok" if ratio <= GOAL else f"  OVER {GOAL}")
        print(f"  {name:20} {figures['rps']:7.1f} {figures['p50']:7.2f} {figures['p99']:7.2f}  {ratio:5.2f}{verdict}")


def home_plans(url: str, store_id: str) -> list[str]:
    """EXPLAIN of every query the home page makes, as the services build them."""
    import peewee as pw

    from models.base import db
    from services.books import overview

    db.initialize(pw.PostgresqlDatabase(None))
    lines = []
    for query in overview.home_queries(store_id, dt.datetime.utcnow().date()):
        text, params = query.sql()
        lines += [row[0] for row in stack.sql(url, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + text, *params)]
    return lines


def main() -> None:
    args = options()
    if not args.check:
        stack.require_wrk()
    url = stack.database_url()
    environment = stack.env(url, REDIS_URL=os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/6")
    store_id, api_key, other_id = reused(url, environment) if args.reuse else seed(url, environment, args)
    other_marks = [row[0] for row in stack.sql(url, "SELECT public_id FROM invoice WHERE store_id = %s "
                                                    "ORDER BY created_at DESC LIMIT 50", other_id)]
    processes = stack.Processes()
    try:
        _web, base = stack.start_gunicorn(processes, "wsgi:app", environment, workers=2, threads=4)
        cookie = signed_in_cookie(base, environment, store_id, reuse=args.reuse)
        targets = pages(url, store_id, args)
        if args.pages:
            targets = {name: targets[name] for name in args.pages.split(",")}
        check_pages(base, targets, cookie, api_key, other_marks)
        print(f"{len(targets)} pages answered 200 with none of the other store's rows")
        if not args.check:
            load_before = stack.load()
            report(measure(base, targets, cookie, api_key, args), args, load_before)
    finally:
        processes.stop_all()
    print("the home page's queries:\n" + "\n".join("    " + line for line in home_plans(url, store_id)))


if __name__ == "__main__":
    main()
