"""The Procfile's `scheduler`: `rq cron` kept running through Redis failovers.

`rq cron` ends on the first Redis error (its loop catches none), and a Sentinel failover is a few
seconds of such errors. So this runs it as a child and starts it again after it fails, a second
later, which a lost tick costs nothing (each sweep finds what is due in the database). It gives up,
passing the failure on to whatever runs it, after MAX_RESTARTS restarts within WINDOW_SECONDS: a
scheduler that cannot start at all (bad settings, Redis gone for good) should be seen, not hidden.
SIGTERM and SIGINT go to the child, and this process ends with it; the child ends with this process
even when it is killed (SIGKILL), so no `rq cron` is left running alone.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

_RQ = os.path.join(os.path.dirname(sys.executable), "rq")     # the rq installed beside this Python
COMMAND = [_RQ if os.path.exists(_RQ) else "rq", "cron", "--config", "infra.rq_config", "scheduler/cron.py"]
MAX_RESTARTS = 30
WINDOW_SECONDS = 600
PAUSE_SECONDS = 1.0


def main(command=COMMAND, *, max_restarts=MAX_RESTARTS, window=WINDOW_SECONDS, pause=PAUSE_SECONDS) -> int:
    state = {"child": None, "stopping": False}

    def forward(signum, _frame):
        state["stopping"] = True
        if state["child"] is not None and state["child"].poll() is None:
            state["child"].send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    restarts: list[float] = []
    while True:
        state["child"] = subprocess.Popen(command, preexec_fn=_end_with_parent)
        status = state["child"].wait()
        if state["stopping"] or status == 0:
            return status
        now = time.monotonic()
        restarts = [when for when in restarts if now - when < window] + [now]
        if len(restarts) > max_restarts:
            print(f"scheduler: rq cron failed {len(restarts)} times in {window} s; giving up", file=sys.stderr, flush=True)
            return status
        print(f"scheduler: rq cron exited with status {status}; starting it again in {pause:.0f} s",
              file=sys.stderr, flush=True)
        time.sleep(pause)
        if state["stopping"]:
            return status


def _end_with_parent() -> None:
    """In the child, before exec: Linux sends it SIGTERM when this process dies, however it dies
    (a SIGKILL of the scheduler must not leave an `rq cron` ticking on its own)."""
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
