"""Tender with SWAP_PROVIDER=oneclick end to end: the Procfile's processes (gunicorn, rq worker,
rq cron) on PostgreSQL and Redis, against the strict 1Click fake (tests/support/oneclick_server.py)
running in this test process. Skipped unless TEST_DATABASE_URL and TEST_REDIS_URL are set.

create -> dry quote without a buyer address -> wet quote -> deposit -> paid -> settled; a refund;
and a rotated 1Click key (buyers 503 `checkout_unavailable`, /health `provider: degraded`).
"""
from __future__ import annotations

from decimal import Decimal
import json
import os
from pathlib import Path
import subprocess

import pytest

from tests.support.oneclick_server import OneClickServer
from tests.support.contract import checked_session
from tests.support.polling import free_port, wait_for
from tests.support.processes import (
    BIN, DATABASE_URL, REDIS_URL, ROOT, healthy, procfile_command, real_stack_env, stop,
)

pytestmark = pytest.mark.skipif(not (DATABASE_URL and REDIS_URL),
                                reason="needs TEST_DATABASE_URL and TEST_REDIS_URL (the real stack)")

API_KEY = "e2e-oneclick-key"
BUYER_REFUND = "0x52908400098527886E0F7030069857D2E4169EE7"


def hashes(*names):
    return [{"hash": name, "explorerUrl": ""} for name in names]


@pytest.fixture(scope="module")
def stack(test_env):   # test_env: creates the test database when this runs first
    import redis

    redis.Redis.from_url(REDIS_URL).flushdb()
    with OneClickServer(token=API_KEY) as fake:
        env = real_stack_env(SWAP_PROVIDER="oneclick", ONECLICK_BASE_URL=fake.url, ONECLICK_API_KEY=API_KEY,
                             CHAIN_POLL_INTERVAL_SECONDS="1", SETTLEMENT_POLL_INTERVAL_SECONDS="1",
                             EXPIRY_SWEEP_INTERVAL_SECONDS="1")
        subprocess.run(procfile_command("release"), cwd=ROOT, env=env, check=True, capture_output=True)
        created = subprocess.run([str(BIN / "flask"), "--app", "wsgi", "stores", "create", "--name", "1Click shop",
                                  "--payout-wallet", "e2e-merchant.near", "--json"], cwd=ROOT, env=env,
                                 check=True, capture_output=True, text=True)
        api_key = json.loads(created.stdout.strip().splitlines()[-1])["api_key"]
        port = free_port()
        started = []
        try:
            for name, extra in (("web", {"HOST": "127.0.0.1", "PORT": str(port), "WEB_CONCURRENCY": "1"}),
                                ("worker", {}), ("scheduler", {})):
                # E2E_LOG_DIR keeps each process's output for a failure's post-mortem.
                log = open(Path(os.environ["E2E_LOG_DIR"]) / f"oneclick-{name}.log", "ab") \
                    if os.environ.get("E2E_LOG_DIR") else subprocess.DEVNULL
                started.append(subprocess.Popen(procfile_command(name), cwd=ROOT, env={**env, **extra},
                                                 stdout=log, stderr=log, start_new_session=True))
            base_url = f"http://127.0.0.1:{port}"
            wait_for(lambda: healthy(base_url), timeout=30, what="gunicorn to answer /health")
            session = checked_session(base_url)      # every JSON answer is validated against the document
            yield {"url": base_url, "fake": fake, "session": session,
                   "auth": {"Authorization": f"Bearer {api_key}"}}
        finally:
            for process in started:
                stop(process)


def _create(stack) -> str:
    created = stack["session"].post(f"{stack['url']}/v1/invoices", json={"amount": "10.00"}, headers=stack["auth"],
                                    timeout=5)
    assert created.status_code == 201, created.text
    return created.json()["id"]


def _quote(stack, invoice_id, **body):
    return stack["session"].post(f"{stack['url']}/v1/public/invoices/{invoice_id}/quote",
                                 json={"origin_asset": "usdc.eth", "refund_to": None, "dry": True, **body}, timeout=10)


def _status(stack, invoice_id) -> dict:
    url = f"{stack['url']}/v1/invoices/{invoice_id}/status"
    return stack["session"].get(url, headers=stack["auth"], timeout=5).json()


def _committed(stack) -> tuple[str, dict]:
    invoice_id = _create(stack)
    estimate = _quote(stack, invoice_id)                        # the checkout page's price, no buyer address
    assert estimate.status_code == 200, estimate.text
    wet = _quote(stack, invoice_id, refund_to=BUYER_REFUND, dry=False)
    assert wet.status_code == 200, wet.text
    return invoice_id, wet.json()["quote"]


def test_paid_and_settled(stack):
    invoice_id, quote = _committed(stack)
    units = str(int(Decimal(quote["amount_in"]) * 10 ** 6))
    stack["fake"].script_status(
        quote["deposit_address"],
        {"status": "KNOWN_DEPOSIT_TX", "swapDetails": {"depositedAmount": units, "originChainTxHashes": hashes("0xd")}},
        {"status": "PROCESSING", "swapDetails": {"depositedAmount": units, "originChainTxHashes": hashes("0xd")}},
        {"status": "SUCCESS", "swapDetails": {
            "amountIn": units, "depositedAmount": units, "amountOut": "10000000", "amountOutUsd": "10.00",
            "refundedAmount": "0", "originChainTxHashes": hashes("0xd"), "destinationChainTxHashes": hashes("0xp")}})

    settled = wait_for(lambda: (lambda s: s if s.get("received_amount") else None)(_status(stack, invoice_id)),
                       timeout=45, what="paid and settled")

    assert settled["status"] == "paid" and settled["transaction_hash"] == "0xd"
    assert all(request.headers.get("x-api-key") == API_KEY for request in stack["fake"].requests_to("/v0/quote"))


def test_refunded(stack):
    invoice_id, quote = _committed(stack)
    units = str(int(Decimal(quote["amount_in"]) * 10 ** 6))
    stack["fake"].script_status(quote["deposit_address"], {"status": "REFUNDED", "swapDetails": {
        "depositedAmount": units, "refundedAmount": units, "originChainTxHashes": hashes("0xd2", "0xr2")}})

    wait_for(lambda: _status(stack, invoice_id)["status"] == "refunded", timeout=45, what="refunded")


def test_a_wrong_key_is_an_operator_outage(stack):
    invoice_id = _create(stack)
    stack["fake"].token = "rotated-key"          # 1Click no longer accepts ours
    try:
        refused = _quote(stack, invoice_id)
        assert (refused.status_code, refused.json()["error"]["code"]) == (503, "checkout_unavailable")
        health = stack["session"].get(f"{stack['url']}/health", timeout=5)
        assert health.status_code == 200 and health.json()["components"]["provider"] == "degraded"
    finally:
        stack["fake"].token = API_KEY
    assert _quote(stack, invoice_id).status_code == 200
