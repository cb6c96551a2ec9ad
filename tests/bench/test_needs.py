"""A benchmark that needs wrk says so in one line, and how to get it, before it touches anything;
never a FileNotFoundError traceback from deep inside its first measurement."""
import os
import subprocess
import sys

import pytest

from tests.support.polling import free_port
from tests.support.processes import ROOT


@pytest.mark.parametrize("benchmark", ["bench.create_invoice", "bench.lists", "bench.scaling",
                                       "bench.dashboard_pages"])
def test_a_benchmark_without_wrk_says_what_it_needs_in_one_line(tmp_path, benchmark):
    # No wrk on this PATH, and a database that would fail loudly if the benchmark went on to it.
    env = {**os.environ, "PATH": str(tmp_path), "PYTHONPATH": str(ROOT),
           "DATABASE_URL": f"postgresql://postgres@127.0.0.1:{free_port()}/nowhere"}
    result = subprocess.run([sys.executable, "-m", benchmark], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode != 0
    assert result.stderr.strip().count("\n") == 0 and "Traceback" not in result.stderr, result.stderr
    assert "apt-get install wrk" in result.stderr
