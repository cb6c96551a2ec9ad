"""`rq cron scheduler/cron.py`: which sweeps run, on which queue, how often (intervals from env).

`rq cron` imports this module and takes the jobs it registers, so registering at import is the
config format; nothing else happens here (no connection: only the environment is read). The
schedule is in scheduler/schedule.py. Every sweep is idempotent, so a missed or doubled tick is
harmless.
"""
import os

from rq import cron

from config import load_settings
from scheduler.schedule import sweeps, use_json_queues

use_json_queues()
for _sweep in sweeps(load_settings(os.environ)):
    cron.register(**_sweep)
