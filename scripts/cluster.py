"""Tender on several hosts, on this machine: `make cluster` (start it, keep it up for a while) and
`make cluster-check` (start it, run the chaos workload through three faults, report, stop).

Every host is a network namespace this script creates and removes (names `tdc-*`), joined by a
bridge inside a namespace of its own, on the private 10.230.0.0/24: nothing is added to the
machine's own network, and no address outside those namespaces is used. Needs root (`ip netns`).

    client   10.230.0.10  haproxy (:8080, over both app hosts), the webhook receiver (:9000), the load
    app1/2   10.230.0.11/12  web (gunicorn), worker, webhooks: the Procfile's lines
    sched    10.230.0.13  scheduler (scheduler/supervise.py over rq cron)
    redis1-3 10.230.0.21-23  Redis primary (1), replica (2), a Sentinel on each
    db       10.230.0.31  PostgreSQL 15 (a cluster of its own, initdb'd here) and PgBouncer (:6432,
                          transaction pooling); migrations go to PostgreSQL directly

Everything is bounded: each wait has a deadline, the whole run a ceiling (`--max-seconds`), after
which, or on any error or signal, every process started is killed by PID and the namespaces removed.
"""
from __future__ import annotations

import argparse
import ctypes
import itertools
import json
import os
from pathlib import Path
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.receiver import EventReceiver  # noqa: E402  (the repository's root, for `python scripts/cluster.py`)
from scripts import cluster_needs, cluster_report  # noqa: E402
PY_BIN = Path(sys.executable).parent
PG_BIN = Path("/usr/lib/postgresql/15/bin")
PREFIX = "tdc"
NET = "10.230.0"
HOSTS = {"client": 10, "app1": 11, "app2": 12, "sched": 13, "redis1": 21, "redis2": 22, "redis3": 23, "db": 31}
MASTER = "tender"
LB = f"http://{NET}.10:8080"
RECEIVER = f"http://{NET}.10:9000/hook"
CLONE_NEWNET = 0x40000000
SUBSCRIBED = ("invoice.created", "invoice.awaiting_payment", "invoice.paid", "invoice.settled")
AS_POSTGRES = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"]   # they refuse root


def ip_of(host: str) -> str:
    return f"{NET}.{HOSTS[host]}"


def ns(host: str) -> str:
    return f"{PREFIX}-{host}"


def run(*args, check=True, timeout=60, **kwargs):
    return subprocess.run([str(a) for a in args], check=check, timeout=timeout, capture_output=True, text=True,
                          **kwargs)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


class Cluster:
    def __init__(self, workdir: Path, *, web_threads: int = 4):
        self.workdir = workdir
        self.web_threads = web_threads
        self.processes: dict[str, subprocess.Popen] = {}
        self.namespaces: list[str] = []
        self.logs = workdir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)

    # ---- network ---------------------------------------------------------------------------
    def build_network(self) -> None:
        switch = ns("switch")
        self._add_namespace(switch)
        run("ip", "-n", switch, "link", "add", "br0", "type", "bridge")
        run("ip", "-n", switch, "link", "set", "br0", "up")
        for host in HOSTS:
            self._add_namespace(ns(host))
            run("ip", "-n", switch, "link", "add", f"v-{host}", "type", "veth", "peer", "name", "eth0",
                "netns", ns(host))
            run("ip", "-n", switch, "link", "set", f"v-{host}", "master", "br0", "up")
            run("ip", "-n", ns(host), "addr", "add", f"{ip_of(host)}/24", "dev", "eth0")
            run("ip", "-n", ns(host), "link", "set", "eth0", "up")

    def _add_namespace(self, name: str) -> None:
        if name in run("ip", "netns", "list").stdout.split():
            raise SystemExit(f"network namespace {name} exists already: another cluster runs (or a crashed one "
                             f"left it: `ip netns del {name}`)")
        run("ip", "netns", "add", name)
        self.namespaces.append(name)
        run("ip", "-n", name, "link", "set", "lo", "up")

    def set_link(self, host: str, up: bool) -> None:
        run("ip", "-n", ns(host), "link", "set", "eth0", "up" if up else "down")

    # ---- processes -------------------------------------------------------------------------
    def start(self, name: str, host: str, argv, *, env=None, cwd=ROOT) -> subprocess.Popen:
        out = open(self.logs / f"{name}.log", "ab")
        process = subprocess.Popen(["ip", "netns", "exec", ns(host), *[str(a) for a in argv]], cwd=cwd,
                                   env=env or os.environ.copy(), stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        out.close()
        self.processes[name] = process
        return process

    def kill(self, name: str, sig=signal.SIGKILL) -> None:
        """Signal the process group this script started as `name` (its session: gunicorn's workers too)."""
        process = self.processes.get(name)
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)

    def stop_all(self) -> None:
        for name in list(self.processes):
            try:
                self.kill(name, signal.SIGTERM if name.startswith(("postgres", "pgbouncer")) else signal.SIGKILL)
            except Exception as error:          # keep stopping the others
                log(f"stopping {name}: {error}")

    def remove_network(self) -> None:
        for name in reversed(self.namespaces):
            run("ip", "netns", "del", name, check=False)
        self.namespaces.clear()

    # ---- services --------------------------------------------------------------------------
    def start_postgres(self) -> None:
        data = self.workdir / "pg"
        data.mkdir()
        shutil.chown(self.workdir, "postgres")
        shutil.chown(data, "postgres")
        os.chmod(data, 0o700)
        run(PG_BIN / "initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8",
            user="postgres", timeout=120)
        with open(data / "pg_hba.conf", "a") as hba:
            hba.write(f"host all all {NET}.0/24 trust\n")
        self.start("postgres", "db", [*AS_POSTGRES, PG_BIN / "postgres", "-D", data, "-c", f"listen_addresses={ip_of('db')}",
                                      "-c", "port=5432", "-c", f"unix_socket_directories={data}", "-c", "fsync=off",
                                      "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                                      "-c", "max_connections=200", "-c", "shared_buffers=64MB"], cwd=data)
        self._wait(lambda: self.in_ns("db", "pg_isready", "-h", ip_of("db"), "-p", "5432").returncode == 0,
                   60, "PostgreSQL")
        self.in_ns("db", "psql", "-h", ip_of("db"), "-U", "postgres", "-c", "CREATE DATABASE tender", check=True)
        bouncer = self.workdir / "pgbouncer"
        bouncer.mkdir()
        (bouncer / "users.txt").write_text('"postgres" ""\n')
        (bouncer / "pgbouncer.ini").write_text(f"""[databases]
* = host={ip_of('db')} port=5432
[pgbouncer]
listen_addr = {ip_of('db')}
listen_port = 6432
unix_socket_dir =
auth_type = trust
auth_file = {bouncer}/users.txt
admin_users = postgres
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 40
max_db_connections = 120
server_reset_query =
query_wait_timeout = 60
idle_transaction_timeout = 10
""")
        shutil.chown(bouncer, "postgres")
        self.start("pgbouncer", "db", [*AS_POSTGRES, "pgbouncer", bouncer / "pgbouncer.ini"], cwd=bouncer)
        self._wait(lambda: self.in_ns("db", "pg_isready", "-h", ip_of("db"), "-p", "6432").returncode == 0,
                   30, "PgBouncer")

    def pgbouncer_console(self, command: str) -> str:
        done = self.in_ns("client", "psql", "-h", ip_of("db"), "-p", "6432", "-U", "postgres", "-d", "pgbouncer",
                          "-c", command, check=True)
        return done.stdout

    def start_redis(self) -> None:
        primary = ip_of("redis1")
        for index, host in enumerate(("redis1", "redis2"), start=1):
            extra = [] if host == "redis1" else ["--replicaof", primary, "6379"]
            self.start(f"redis{index}", host, ["redis-server", "--bind", ip_of(host), "--port", "6379", "--save", "",
                                               "--appendonly", "no", "--protected-mode", "no",
                                               "--dir", self.workdir, *extra])
        for host in ("redis1", "redis2", "redis3"):
            config = self.workdir / f"sentinel-{host}.conf"
            config.write_text(f"bind {ip_of(host)}\nport 26379\nprotected-mode no\ndir {self.workdir}\n"
                              f"sentinel monitor {MASTER} {primary} 6379 2\n"
                              f"sentinel down-after-milliseconds {MASTER} 1000\n"
                              f"sentinel failover-timeout {MASTER} 10000\n")
            self.start(f"sentinel-{host}", host, ["redis-sentinel", config])
        self._wait(self.sentinels_ready, 60, "the Sentinels to see the replica and each other")

    def redis_cli(self, host: str, port: int, *args) -> str:
        return self.in_ns("client", "redis-cli", "-h", ip_of(host), "-p", port, *args).stdout.strip()

    def sentinels_ready(self) -> bool:
        for host in ("redis1", "redis2", "redis3"):
            replicas = self.redis_cli(host, 26379, "SENTINEL", "REPLICAS", MASTER)
            others = self.redis_cli(host, 26379, "SENTINEL", "SENTINELS", MASTER)
            if ip_of("redis2") not in replicas or others.count("name") < 2:
                return False
        return "master_link_status:up" in self.redis_cli("redis2", 6379, "INFO", "replication")

    def master_address(self) -> str:
        for host in ("redis1", "redis2", "redis3"):
            answer = self.redis_cli(host, 26379, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER).split()
            if answer:
                return answer[0]
        return ""

    def app_env(self, host: str, **extra) -> dict:
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("TEST_", "PYTEST", "REDIS_", "DATABASE_", "WEB_", "SANDBOX_"))}
        env.update({
            "PATH": f"{PY_BIN}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1",
            "DATABASE_URL": f"postgresql://postgres@{ip_of('db')}:6432/tender?application_name=tender-{host}",
            "DATABASE_DIRECT_URL": f"postgresql://postgres@{ip_of('db')}:5432/tender",
            "REDIS_SENTINELS": ",".join(f"{ip_of(h)}:26379" for h in ("redis1", "redis2", "redis3")),
            "REDIS_SENTINEL_MASTER": MASTER,
            "SWAP_PROVIDER": "sandbox", "ALLOW_PRIVATE_WEBHOOK_URLS": "1", "EMBEDDED_JOBS": "0",
            "PUBLIC_BASE_URL": LB, "LOG_LEVEL": "WARNING",
            "RATE_LIMIT_WRITE_MODE": "off", "RATE_LIMIT_READ_MODE": "off", "RATE_LIMIT_PUBLIC_MODE": "off",
            "HOST": ip_of(host), "PORT": "8000", "WEB_CONCURRENCY": "1", "WEB_THREADS": str(self.web_threads),
            "WEBHOOK_TIMEOUT_SECONDS": "5",
            "WEBHOOK_RETRY_SCHEDULE": "2,5,10,20,30,60",
        })
        env.update({key: str(value) for key, value in extra.items()})
        return env

    def procfile(self, name: str) -> list[str]:
        import shlex
        line = next(line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith(f"{name}:"))
        return shlex.split(line.split(":", 1)[1])

    def release(self) -> None:
        done = self.in_ns("sched", *self.procfile("release"), env=self.app_env("sched"), cwd=ROOT, timeout=180)
        if done.returncode != 0:
            raise SystemExit(f"release failed: {done.stderr[-2000:]}")

    def start_app(self, host: str, **extra) -> None:
        env = self.app_env(host, **extra)
        for name in ("web", "worker", "webhooks"):
            self.start(f"{name}-{host}", host, self.procfile(name), env=env)

    def start_scheduler(self) -> None:
        self.start("scheduler", "sched", self.procfile("scheduler"), env=self.app_env("sched"))

    def start_haproxy(self) -> None:
        config = self.workdir / "haproxy.cfg"
        servers = "\n".join(f"  server {h} {ip_of(h)}:8000 check inter 500 fall 2 rise 2" for h in ("app1", "app2"))
        config.write_text(f"""global
  maxconn 2000
defaults
  mode http
  timeout connect 1s
  timeout client 60s
  timeout server 60s
  retries 3
  option redispatch
frontend tender
  bind {ip_of('client')}:8080
  default_backend apps
backend apps
  balance roundrobin
{servers}
""")
        self.start("haproxy", "client", ["haproxy", "-db", "-f", config])

    def in_ns(self, host: str, *argv, check=False, timeout=60, **kwargs):
        return run("ip", "netns", "exec", ns(host), *argv, check=check, timeout=timeout, **kwargs)

    @staticmethod
    def _wait(check, timeout: float, what: str, interval: float = 0.25):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                result = check()
            except Exception:
                result = False
            if result:
                return result
            time.sleep(interval)
        raise RuntimeError(f"timed out after {timeout} s waiting for {what}")

    def up(self) -> None:
        log("network: 9 namespaces, bridge, 10.230.0.0/24")
        self.build_network()
        log("PostgreSQL 15 and PgBouncer on db")
        self.start_postgres()
        log("Redis primary, replica, three Sentinels")
        self.start_redis()
        log("release (migrations, straight to PostgreSQL)")
        self.release()
        log("app1, app2 (web, worker, webhooks), scheduler, haproxy")
        for host in ("app1", "app2"):
            self.start_app(host)
        self.start_scheduler()
        self.start_haproxy()
        enter_namespace("client")
        self._wait(lambda: all(_healthy(f"http://{ip_of(h)}:8000") for h in ("app1", "app2")), 120, "both web hosts")
        self._wait(lambda: _healthy(LB), 30, "haproxy")

    def create_store(self) -> str:
        done = self.in_ns("sched", PY_BIN / "flask", "--app", "wsgi", "stores", "create", "--name", "Cluster",
                          "--payout-wallet", "cluster.near", "--json", env=self.app_env("sched"), cwd=ROOT,
                          timeout=120)
        if done.returncode != 0:
            raise SystemExit(f"stores create failed: {done.stderr[-2000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])["api_key"]


def enter_namespace(host: str) -> None:
    """Move this process's (only, so far) thread into `host`'s network namespace: the load and the
    receiver run there, as a client machine would. Threads started afterwards inherit it."""
    assert threading.active_count() == 1, "enter the namespace before starting threads"
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    fd = os.open(f"/var/run/netns/{ns(host)}", os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns")
    finally:
        os.close(fd)


def _healthy(base: str) -> bool:
    import requests
    try:
        return requests.get(f"{base}/health", timeout=2).status_code in (200, 503)
    except requests.RequestException:
        return False


# ---- the receiver and the load ---------------------------------------------------------------

class Load:
    """The chaos workload: invoices created, quoted, committed and paid at a steady rate through
    haproxy, each step retried with its Idempotency-Key until it succeeds (at most STEP_SECONDS).
    Every refused attempt (connection error, 5xx, 429) is recorded with its time."""

    STEP_SECONDS = 90

    def __init__(self, api_key: str, rate: float):
        import requests
        self.api_key, self.rate = api_key, rate
        self.refused: list[tuple[float, float, str]] = []     # (attempt began, failed, why)
        self.windows: list[float] = []            # each step's refused-retry window (0: its first try succeeded)
        self.paid: dict[str, float] = {}          # invoice id -> when its pay call was accepted
        self.unfinished: list[str] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.local = threading.local()
        self.threads: list[threading.Thread] = []
        self.requests = requests

    def session(self):
        if not hasattr(self.local, "session"):
            self.local.session = self.requests.Session()
            self.local.session.trust_env = False
        return self.local.session

    def step(self, method: str, path: str, body=None, *, auth=True) -> dict:
        headers = {"Idempotency-Key": str(uuid.uuid4())}
        if auth:
            headers["Authorization"] = f"Bearer {self.api_key}"
        deadline = time.monotonic() + self.STEP_SECONDS
        failed_at: list[float] = []
        while time.monotonic() < deadline:
            attempt = time.monotonic()
            try:
                answer = self.session().request(method, LB + path, json=body, headers=headers, timeout=15)
                if answer.status_code < 300:
                    with self.lock:
                        self.windows.append(cluster_report.refused_window(failed_at, time.monotonic()))
                    return answer.json()
                if answer.status_code < 500 and answer.status_code not in (409, 429):
                    raise RuntimeError(f"{method} {path}: {answer.status_code} {answer.text[:300]}")
                reason = str(answer.status_code)
            except self.requests.RequestException as error:
                reason = type(error).__name__
                self.local.__dict__.pop("session", None)
            failed_at.append(time.monotonic())
            with self.lock:
                self.refused.append((attempt, failed_at[-1], reason))
            time.sleep(0.2)
        raise RuntimeError(f"{method} {path}: no success within {self.STEP_SECONDS} s")

    def one_invoice(self) -> None:
        invoice = None
        try:
            invoice = self.step("POST", "/v1/invoices", {"amount": "10.00", "currency": "USD"})["id"]
            quote = {"origin_asset": "usdc.eth", "refund_to": "0x" + "1" * 40}
            self.step("POST", f"/v1/public/invoices/{invoice}/quote", {**quote, "dry": True}, auth=False)
            self.step("POST", f"/v1/public/invoices/{invoice}/quote", {**quote, "dry": False}, auth=False)
            self.step("POST", f"/v1/public/invoices/{invoice}/simulate-payment", {}, auth=False)
            with self.lock:
                self.paid[invoice] = time.monotonic()
        except Exception as error:
            log(f"invoice {invoice}: {error}")
            with self.lock:
                self.unfinished.append(invoice or "?")

    def run_for(self, seconds: float) -> None:
        """Start one invoice every 1/rate s for `seconds`, each in a thread of its own."""
        started = time.monotonic()
        for index in itertools.count():
            due = started + index / self.rate
            if due - started >= seconds:
                break
            time.sleep(max(0.0, due - time.monotonic()))
            thread = threading.Thread(target=self.one_invoice, daemon=True)
            thread.start()
            self.threads.append(thread)

    def join(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))


# ---- the check --------------------------------------------------------------------------------

def database(cluster: Cluster):
    import psycopg2
    connection = psycopg2.connect(host=ip_of("db"), port=5432, user="postgres", dbname="tender", connect_timeout=5)
    connection.autocommit = True
    return connection


def invoice_count(cluster: Cluster) -> int:
    with database(cluster) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM invoice")
        return cursor.fetchone()[0]


def settle_state(cluster: Cluster, invoices: list[str]) -> dict:
    with database(cluster) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT public_id, status, received_amount IS NOT NULL FROM invoice WHERE public_id = ANY(%s)",
                       (invoices,))
        rows = cursor.fetchall()
        cursor.execute("SELECT e.public_id, e.type, i.public_id FROM event e JOIN invoice i ON i.id = e.invoice_id "
                       "WHERE i.public_id = ANY(%s) AND e.type = ANY(%s)", (invoices, list(SUBSCRIBED)))
        events = cursor.fetchall()
    return {"invoices": rows, "events": events}


def check(args) -> dict:
    """One run of the chaos workload through the three faults, on a cluster built for it; its report."""
    workdir = Path(tempfile.mkdtemp(prefix="tender-cluster-"))
    cluster = Cluster(workdir)
    report: dict = {"faults": []}
    began = time.monotonic()
    try:
        cluster.up()
        log(f"cluster up in {time.monotonic() - began:.0f} s")
        report["startup_seconds"] = round(time.monotonic() - began, 1)
        api_key = cluster.create_store()
        receiver = EventReceiver(ip_of("client"), 9000).start()
        import requests
        created = requests.post(f"{LB}/v1/webhook-endpoints", json={"url": RECEIVER, "events": list(SUBSCRIBED)},
                                headers={"Authorization": f"Bearer {api_key}"}, timeout=15)
        created.raise_for_status()
        faults = [("redis primary kill -9, Sentinel failover", lambda: redis_failover(cluster), None),
                  ("app host app1 cut off (link down) and its processes killed", lambda: cut_app_host(cluster),
                   lambda: restore_app_host(cluster)),
                  (f"PgBouncer PAUSE {args.pause_seconds} s, then RESUME",
                   lambda: pause_pgbouncer(cluster, args.pause_seconds), None)]
        loads = []
        for name, inject, restore in faults:
            load = Load(api_key, args.rate)
            log(f"phase: {name}: load {args.rate}/s for {args.phase_seconds} s, the fault at {args.fault_at} s")
            driver = threading.Thread(target=load.run_for, args=(args.phase_seconds,), daemon=True)
            phase_start = time.monotonic()
            driver.start()
            time.sleep(args.fault_at)
            fault_time = time.monotonic()
            detail = inject()
            driver.join(args.phase_seconds + 30)
            load.join(Load.STEP_SECONDS * 4 + 30)
            refused = [(began_at, ended) for began_at, ended, _reason in load.refused if ended >= phase_start]
            reasons: dict[str, int] = {}
            for _began, _ended, reason in load.refused:
                reasons[reason] = reasons.get(reason, 0) + 1
            report["faults"].append({
                "fault": name, "detail": detail, "invoices": len(load.paid) + len(load.unfinished),
                "paid_accepted": len(load.paid), "unfinished": load.unfinished,
                "requests_refused": len(refused), "refused_by_reason": reasons,
                # After the last refused attempt began, every attempt succeeded; it failed (a timeout
                # of the client's 15 s, or an error answer) at the second figure.
                "last_refused_attempt_began_after_fault_s": round(max(b for b, _e in refused) - fault_time, 1)
                if refused else None,
                "last_refusal_after_fault_s": round(max(e for _b, e in refused) - fault_time, 1) if refused else None,
                "longest_refused_retry_s": max(load.windows, default=None),
            })
            loads.append(load)
            log(f"  {report['faults'][-1]}")
            if restore:
                restore()
        invoices = [invoice for load in loads for invoice in load.paid]
        log(f"waiting (at most {args.settle_seconds} s) for all {len(invoices)} paid invoices to settle "
            "and their events to arrive")
        deadline = time.monotonic() + args.settle_seconds
        while True:
            state = settle_state(cluster, invoices)
            settled = {invoice for invoice, status, received in state["invoices"] if status == "paid" and received}
            with receiver.lock:
                received_ids = {event_id for event_id, _type, _at in receiver.events}
            if (len(settled) == len(invoices) and {e for e, _k, _i in state["events"]} <= received_ids) or \
                    time.monotonic() > deadline:
                break
            time.sleep(1)
        time.sleep(3)                       # a late duplicate would show up now
        with receiver.lock:
            received = [event_id for event_id, _type, _at in receiver.events]
            first_arrival: dict[str, float] = {}
            for event_id, _type, at in receiver.events:
                first_arrival.setdefault(event_id, at)
        paid_event = {invoice: event_id for event_id, kind, invoice in state["events"] if kind == "invoice.paid"}
        paid = {invoice for invoice, status, _r in state["invoices"] if status == "paid"}
        for load, fault in zip(loads, report["faults"]):
            mine = set(load.paid)
            expected = {event_id for event_id, _kind, invoice in state["events"] if invoice in mine}
            arrivals = [event_id for event_id in received if event_id in expected]
            waits = sorted(first_arrival[paid_event[invoice]] - load.paid[invoice] for invoice in mine
                           if paid_event.get(invoice) in first_arrival)
            fault.update({
                # From the buyer's payment accepted to the merchant's receiver getting invoice.paid.
                "pay_to_invoice_paid_p50_s": cluster_report.median(waits),
                "pay_to_invoice_paid_max_s": round(waits[-1], 1) if waits else None,
                "payments_lost": len(mine - paid), "invoices_settled": len(mine & settled),
                "every_invoice_settled": mine <= settled, "events_expected": len(expected),
                "events_lost": len(expected - set(arrivals)), "events_duplicated": len(arrivals) - len(set(arrivals)),
            })
        report["totals"] = {
            "invoices_paid_accepted": len(invoices),
            "invoices_settled": len(settled),
            "payments_lost": len(set(invoices) - paid),
            "events_expected": len(state["events"]),
            "events_lost": len({e for e, _k, _i in state["events"]} - set(received)),
            "events_duplicated": len(received) - len(set(received)),
            "unfinished_flows": sum(len(load.unfinished) for load in loads),
            # Each flow creates one invoice, its create retried with one Idempotency-Key: more is a double.
            "invoices_doubled": invoice_count(cluster) - sum(len(load.paid) + len(load.unfinished) for load in loads),
        }
        report["seconds"] = round(time.monotonic() - began, 1)
        receiver.stop()
    except BaseException as error:
        report["error"] = f"{type(error).__name__}: {error}"
        raise
    finally:
        cluster.stop_all()
        cluster.remove_network()
        print(json.dumps(report, indent=2), flush=True)
        if args.keep_logs:
            log(f"logs kept in {workdir / 'logs'}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return report


def check_runs(args) -> int:
    """`--runs N` runs of `check`, each on a cluster of its own; every run's figures, then the verdict."""
    reports = []
    for number in range(1, args.runs + 1):
        log(f"cluster-check run {number} of {args.runs}")
        try:
            reports.append(check(args))
        except Exception as error:        # the run's report (with its error) was printed; the next run goes on
            reports.append({"error": f"{type(error).__name__}: {error}"})
        log(cluster_report.summary(reports[-1:], first=number).splitlines()[0])
    print(cluster_report.summary(reports), flush=True)
    return 0 if all(cluster_report.run_passed(report) for report in reports) else 1


def redis_failover(cluster: Cluster) -> dict:
    old = cluster.master_address()
    name = "redis1" if old == ip_of("redis1") else "redis2"
    killed = time.monotonic()
    cluster.kill(name)
    new = cluster._wait(lambda: (lambda a: a if a and a != old else None)(cluster.master_address()), 60,
                        "the Sentinels to promote the replica", interval=0.1)
    return {"old_master": old, "new_master": new, "promoted_after_seconds": round(time.monotonic() - killed, 1)}


def cut_app_host(cluster: Cluster) -> dict:
    cluster.set_link("app1", False)
    for name in ("web-app1", "worker-app1", "webhooks-app1"):
        cluster.kill(name)
    return {"host": "app1"}


def restore_app_host(cluster: Cluster) -> None:
    cluster.set_link("app1", True)
    cluster.start_app("app1")
    cluster._wait(lambda: _healthy(f"http://{ip_of('app1')}:8000"), 120, "app1 back")


def pause_pgbouncer(cluster: Cluster, seconds: float) -> dict:
    began = time.monotonic()
    cluster.pgbouncer_console("PAUSE")
    paused_in = time.monotonic() - began
    time.sleep(seconds)
    cluster.pgbouncer_console("RESUME")
    return {"pause_took_seconds": round(paused_in, 2), "paused_seconds": seconds}


def keep_up(args) -> int:
    workdir = Path(tempfile.mkdtemp(prefix="tender-cluster-"))
    cluster = Cluster(workdir)
    try:
        cluster.up()
        api_key = cluster.create_store()
        log(f"cluster up: API {LB} (from the client namespace: ip netns exec {ns('client')} curl {LB}/health), "
            f"API key {api_key}; logs in {cluster.logs}. Stopping in {args.seconds} s (or Ctrl-C).")
        time.sleep(args.seconds)
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop_all()
        cluster.remove_network()
        shutil.rmtree(workdir, ignore_errors=True)
        log("cluster stopped and its namespaces removed")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start the cluster and keep it up for --seconds")
    up.add_argument("--seconds", type=int, default=300)
    chk = sub.add_parser("check", help="the chaos workload through three faults; exit 0 when nothing was lost")
    chk.add_argument("--rate", type=float, default=2.0, help="invoices started per second")
    chk.add_argument("--phase-seconds", type=float, default=40)
    chk.add_argument("--fault-at", type=float, default=12)
    chk.add_argument("--pause-seconds", type=float, default=5)
    chk.add_argument("--settle-seconds", type=float, default=180)
    chk.add_argument("--keep-logs", action="store_true")
    chk.add_argument("--runs", type=int, default=1, help="repeat the whole check N times, each on a new cluster")
    chk.add_argument("--no-install", action="store_true",
                     help="name the missing programs and stop, instead of installing their Debian packages")
    parser.add_argument("--max-seconds", type=int, default=1200, help="the whole run's ceiling")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("cluster: needs root (ip netns)")

    def ceiling(_signum, _frame):
        raise TimeoutError(f"the run's ceiling of {args.max_seconds} s")

    signal.signal(signal.SIGALRM, ceiling)
    def terminate(_signum, _frame):
        raise KeyboardInterrupt()

    signal.signal(signal.SIGTERM, terminate)
    cluster_needs.provide(install=not getattr(args, "no_install", False))
    signal.alarm(args.max_seconds * getattr(args, "runs", 1) + (args.seconds if args.command == "up" else 0))
    return keep_up(args) if args.command == "up" else check_runs(args)


if __name__ == "__main__":
    sys.exit(main())
