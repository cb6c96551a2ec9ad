"""What recording a key's last use costs an API request, in one run: GET /v1/invoices?limit=1 with
`api_keys.note_use` as shipped, against the same requests with it replaced by nothing (the
baseline), alternated in rounds so that both see the same machine; then `note_use` alone in each of
its three cases.

    DATABASE_URL=postgresql://… REDIS_URL=redis://…/N .venv/bin/python -m bench.key_use [--requests 2000]

Without DATABASE_URL/REDIS_URL it runs on a temporary SQLite file and fakeredis. One key makes every
request: its minute is recorded by the first, so the others pay only the check of the row they
already hold (the steady state of a busy key). Goal: recorded / baseline <= 1.05 at the median.
It empties the PostgreSQL schema it is given: use a scratch one.
"""
from __future__ import annotations

import datetime as dt
import os
import statistics
import time

from bench import int_options, print_spread
from bench.currency_quotes import in_process_app


def _timed(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def _requests(application, raw: str, args) -> dict[str, list[float]]:
    from services.accounts import api_keys

    client = application.test_client()
    headers = {"Authorization": f"Bearer {raw}"}

    def get():
        assert client.get("/v1/invoices?limit=1", headers=headers).status_code == 200

    recording, nothing = api_keys.note_use, (lambda key, *, now: None)
    seconds: dict[str, list[float]] = {"recorded": [], "baseline": []}
    get()                                                   # warm, and the minute's one write
    for _ in range(args.requests // (2 * args.round_size)):
        for mode, note_use in (("recorded", recording), ("baseline", nothing)):
            api_keys.note_use = note_use
            seconds[mode].extend(_timed(get) for _ in range(args.round_size))
    api_keys.note_use = recording
    return seconds


def _note_use_cases(raw: str, calls: int) -> dict[str, list[float]]:
    """`note_use` alone: the minute recorded in the row it holds; the row older but the minute
    claimed in Redis by another process; the first of a minute (Redis claim and one UPDATE)."""
    from core.clock import utcnow
    from infra import queues
    from models.base import db
    from services.accounts import api_keys

    cases: dict[str, list[float]] = {"row says recorded": [], "claimed elsewhere (Redis)": [],
                                     "first of a minute (Redis + UPDATE)": []}
    with db.connection_context():
        key = api_keys.authenticate(raw, now=utcnow())
        gate = "tender:api_key:last_used:" + key.id
        now = key.last_used_at + dt.timedelta(seconds=1)
        for _ in range(calls):
            cases["row says recorded"].append(_timed(lambda: api_keys.note_use(key, now=now)))
            key.last_used_at = now - dt.timedelta(minutes=5)
            cases["claimed elsewhere (Redis)"].append(_timed(lambda: api_keys.note_use(key, now=now)))
            queues.redis().delete(gate)
            now += dt.timedelta(minutes=2)
            cases["first of a minute (Redis + UPDATE)"].append(_timed(lambda: api_keys.note_use(key, now=now)))
    return cases


def main() -> None:
    args = int_options(requests=2000, round_size=50, calls=300)
    os.environ.setdefault("RATE_LIMIT_READ_MODE", "off")       # as every bench: limits are not measured
    application = in_process_app()
    from core.clock import utcnow
    from models.base import db
    from services.accounts import api_keys, stores

    with db.connection_context():
        store = stores.create_store(name="Bench", payout_wallet="bench.near", now=utcnow())
        _key, raw = api_keys.issue_key(store, kind="standard", now=utcnow())
    seconds = _requests(application, raw, args)
    print_spread(seconds, "requests")
    ratio = statistics.median(seconds["recorded"]) / statistics.median(seconds["baseline"])
    print(f"GET /v1/invoices?limit=1: recorded / baseline = {ratio:.3f} (goal <= 1.05)")
    for case, figures in _note_use_cases(raw, args.calls).items():
        print(f"  note_use, {case}: p50 {statistics.median(figures) * 1e6:.1f} µs")


if __name__ == "__main__":
    main()
