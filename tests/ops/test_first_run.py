"""`make run` on a fresh checkout: its first screen (the URL and the demo store's key) stays in view.

The embedded runtime's sweeps run every 2 s in the web process; their lines, and rq's, are DEBUG
unless LOG_LEVEL asks, so after the start-up lines only requests are logged, one line each."""
import os
import re
import signal
import subprocess

import requests

from tests.support.polling import free_port, wait_for
from tests.support.processes import ROOT

SCREEN = 24         # lines a terminal shows at once
OPERATOR = ("operator", "first-run-operator-password")


def _succeeded_polls(base: str) -> int:
    """How many poll_deposits jobs the embedded runtime has run (0 while gunicorn is not up yet)."""
    try:
        text = requests.get(f"{base}/metrics", auth=OPERATOR, timeout=2).text
    except requests.RequestException:
        return 0
    found = re.search(r'tender_jobs_total\{job="poll_deposits",outcome="succeeded"\} (\d+)', text)
    return int(found.group(1)) if found else 0


def test_make_run_leaves_the_url_and_the_key_on_the_first_screen(tmp_path):
    port = free_port()
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("TEST_", "PYTEST", "REDIS_", "LOG_LEVEL", "EMBEDDED_JOBS"))}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'tender.db'}", PORT=str(port), SWAP_PROVIDER="sandbox",
               OPERATOR_USERNAME=OPERATOR[0], OPERATOR_PASSWORD=OPERATOR[1])
    output = tmp_path / "make-run.out"
    with open(output, "wb") as out:
        make = subprocess.Popen(["make", "--no-print-directory", "run"], cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            # Two rounds of the 2-second sweep: the jobs ran, and would have been logged by now.
            wait_for(lambda: _succeeded_polls(f"http://127.0.0.1:{port}") >= 2, timeout=90,
                     what="the embedded runtime to poll twice")
        finally:
            os.killpg(make.pid, signal.SIGTERM)        # make and the gunicorn it started, our own group
            make.wait(timeout=30)
    lines = output.read_text().splitlines()
    said = [line for line in lines if '"logger": "tender.request"' not in line]
    assert [line for line in lines if '"tender.job"' in line or '"rq.' in line] == []
    key_line = next(i for i, line in enumerate(said) if re.search(r"API key \(shown once, keep it\): sk_live_", line))
    assert any(f"http://127.0.0.1:{port}" in line for line in said[:key_line])
    assert len(said) <= SCREEN, "\n".join(said)
