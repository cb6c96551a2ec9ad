"""The scheduler process: RQ's own `rq cron` with its configuration in scheduler/cron.py."""
