"""A committed quote of a EUR invoice against a USD one's, in one run: converting a price must not slow
the buyer's checkout (the rate is read from the stored cache, never fetched on the request).

    DATABASE_URL=postgresql://… REDIS_URL=redis://…/N .venv/bin/python -m bench.currency_quotes [--quotes 300]

Without DATABASE_URL/REDIS_URL it runs on a temporary SQLite file and fakeredis. It makes `--quotes`
pending invoices in each currency, then commits them (POST /v1/public/invoices/{id}/quote with
`dry: false`, through the app's WSGI stack, sandbox provider), alternating EUR and USD in rounds of
ten so that both see the same machine. It prints each currency's median and p90 and the ratio of the
medians. Goal: EUR / USD <= 1.1. It empties the PostgreSQL schema it is given: use a scratch one.
"""
from __future__ import annotations

import os
import statistics
import tempfile
import time

from bench import int_options, print_spread

BUYER = {"origin_asset": "usdc.eth", "refund_to": "0x" + "b" * 40, "dry": False}


def in_process_app():
    """The app over DATABASE_URL (a temporary SQLite file without it), migrated on an emptied schema."""
    if not os.environ.get("DATABASE_URL"):
        os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/bench.db"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("SWAP_PROVIDER", "sandbox")
    os.environ.setdefault("RATE_LIMIT_WRITE_MODE", "off")
    os.environ.setdefault("RATE_LIMIT_PUBLIC_MODE", "off")
    os.environ.setdefault("EMBEDDED_JOBS", "0")
    from app import create_app
    from cli import migrate
    from models.base import db, is_postgres

    application = create_app()
    with application.app_context(), db.connection_context():
        if is_postgres():
            db.execute_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
        migrate()
    return application


def _invoices(client, headers, currency: str, count: int) -> list[str]:
    return [client.post("/v1/invoices", json={"amount": "25.00", "currency": currency}, headers=headers).json["id"]
            for _ in range(count)]


def _commit(client, invoice_id: str) -> float:
    started = time.perf_counter()
    response = client.post(f"/v1/public/invoices/{invoice_id}/quote", json=BUYER)
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, response.get_data(as_text=True)
    return elapsed


def main() -> None:
    args = int_options(quotes=300, round_size=10)
    application = in_process_app()
    from core.clock import utcnow
    from models.base import db
    from services.accounts import api_keys, stores

    with db.connection_context():
        store = stores.create_store(name="Bench", payout_wallet="bench.near", now=utcnow())
        _key, raw = api_keys.issue_key(store, kind="standard", now=utcnow())
    client = application.test_client()
    headers = {"Authorization": f"Bearer {raw}"}
    pending = {currency: _invoices(client, headers, currency, args.quotes) for currency in ("USD", "EUR")}
    for currency in pending:                              # warm both paths once, uncounted
        _commit(client, pending[currency].pop())
    seconds: dict[str, list[float]] = {"USD": [], "EUR": []}
    while pending["USD"] and pending["EUR"]:
        for currency in ("USD", "EUR"):
            for _ in range(min(args.round_size, len(pending[currency]))):
                seconds[currency].append(_commit(client, pending[currency].pop()))
    print_spread(seconds, "commits")
    ratio = statistics.median(seconds["EUR"]) / statistics.median(seconds["USD"])
    print(f"committed quote: EUR / USD = {ratio:.3f} (goal <= 1.1)")


if __name__ == "__main__":
    main()
