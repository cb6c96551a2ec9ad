"""`rq cron scheduler/cron.py`, run by exactly one Procfile process: which sweeps run, on which
queue, how often (intervals from the environment).

`rq cron` imports this module and takes the jobs it registers, so registering at import is the
config format; nothing else happens here (no connection: only the environment is read). The
schedule itself is scheduler/schedule.py, shared with the embedded scheduler. Sweeps, not timers:
each job finds what is due in the database, so a missed or doubled tick is harmless.
"""
import os

from rq import cron

from config import load_settings
from scheduler.schedule import sweeps

for _sweep in sweeps(load_settings(os.environ)):
    cron.register(**_sweep)
