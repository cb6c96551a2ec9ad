"""bench/dashboard_pages.py at a tiny scale (--check: every page once, no wrk), so the benchmark
keeps working as the pages change: its seed loads, an owner signs in through an invitation, every
page answers 200 with none of the other store's rows, and the home page's queries never read
invoices. PostgreSQL only: the benchmark's bulk SQL is PostgreSQL's."""
import os
import subprocess
import sys

import pytest

from tests.support.databases import sibling_database
from tests.support.processes import ROOT

pytestmark = pytest.mark.skipif(not os.environ.get("TEST_DATABASE_URL"), reason="the benchmark needs PostgreSQL")


def test_every_dashboard_page_answers_on_the_benchmarks_rows(tmp_path):
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    env.update(PYTHONPATH=str(ROOT), DATABASE_URL=sibling_database("dashbench", tmp_path),
               REDIS_URL=os.environ.get("TEST_REDIS_URL") or "redis://127.0.0.1:6379/6")
    result = subprocess.run([sys.executable, "-m", "bench.dashboard_pages", "--check", "--invoices", "400",
                             "--deliveries", "100", "--deep-page", "3"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "18 pages answered 200 with none of the other store's rows" in result.stdout, result.stdout
    plans = result.stdout.split("the home page's queries:", 1)[1]
    assert "settlement_day" in plans and "refund" in plans
    assert " on invoice" not in plans, plans
