"""gunicorn settings for the `web` process. Environment overrides: WEB_CONCURRENCY, WEB_THREADS, PORT."""
import os

bind = f"{os.environ.get('HOST', '0.0.0.0')}:{os.environ.get('PORT', '8000')}"
# 2 x 4 on 2 cores: measured by `python -m bench.create_invoice --sweep` (docs/performance.md); more
# processes than cores, or 8 threads in one, lowered throughput and lengthened the p99 tail.
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("WEB_THREADS", "4"))
# gunicorn's threaded worker, reading each request (headers, and a body up to 64 KiB) in its event
# loop with deadlines before a thread takes it (blueprints/request_reading.py), and whose own refusals
# (414, 400, 431: requests that never reach the app) are JSON like every other error (blueprints/server_errors.py).
worker_class = "blueprints.request_reading.ReadWholeRequestsWorker"
timeout = 30
graceful_timeout = 25      # SIGTERM: finish in-flight requests before exiting
keepalive = 5
# No preload: each worker imports the app after the fork, so no database connection or Redis
# socket is ever shared between processes.
preload_app = False
accesslog = None          # the app logs one JSON line per request itself
# gunicorn's control socket (`gunicornc`) defaults to one path per user ($XDG_RUNTIME_DIR or
# ~/.gunicorn/gunicorn.ctl), so two instances on one machine would share it: off, unless
# GUNICORN_CONTROL_SOCKET gives this instance a path of its own (docs/operations.md).
if os.environ.get("GUNICORN_CONTROL_SOCKET"):
    control_socket = os.environ["GUNICORN_CONTROL_SOCKET"]
else:
    control_socket_disable = True
