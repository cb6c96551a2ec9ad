"""A live Tender for the browser tests: gunicorn on an ephemeral 127.0.0.1 port, and headless
Debian Chromium driven by Playwright.

Embedded default: a fresh SQLite file, and the web process runs the jobs itself (one gunicorn
worker, so one in-process Redis), so a simulated payment really moves the invoice. With
TEST_DATABASE_URL/TEST_REDIS_URL: a `<db>_browser` PostgreSQL database beside the test one, the
test Redis, and `rq worker` + `rq cron` as their own processes, as in production.
"""
from __future__ import annotations

from dataclasses import dataclass
import json
import os
from pathlib import Path
import signal
import subprocess
import sys
import tempfile

import pytest
import requests

from tests.support.chromium import CHROMIUM, launched
from tests.support.databases import sibling_database
from tests.support.polling import free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DESKTOP = {"width": 1024, "height": 760}
PHONE = {"width": 390, "height": 844}
# Every run saves its screenshots; only `SCREENSHOTS=docs` writes them over the copies docs/tour.md shows,
# so an ordinary test run leaves the tracked files alone.
SCREENSHOTS = (ROOT / "docs" / "screenshots" if os.environ.get("SCREENSHOTS") == "docs"
               else Path(tempfile.gettempdir()) / "tender-screenshots")
# axe-core from npm (package.json; `make test` runs `npm ci`): nothing is downloaded at run time.
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
AXE_TIMEOUT_MS = 30_000
AXE_FAILS = ("serious", "critical")
# What a keyboard can reach: visible, enabled controls that are in the tab order.
CONTROLS_JS = """() => [...document.querySelectorAll('a[href], button, input, select, textarea, [tabindex]')]
  .filter(el => el.tabIndex >= 0 && !el.disabled && el.offsetParent !== null)
  .map(el => el.id || el.getAttribute('aria-label') || el.textContent.trim())"""

if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium; .ci/run installs it)", allow_module_level=True)


@dataclass
class Server:
    base_url: str
    database_url: str
    api_key: str
    store_id: str
    payout_wallet: str

    @property
    def auth(self) -> dict:
        return {"Authorization": f"Bearer {self.api_key}"}

    def api(self, method: str, path: str, **kwargs) -> requests.Response:
        return requests.request(method, self.base_url + path, headers=self.auth, timeout=10, **kwargs)

    def one(self, statement: str, params: tuple):
        """The first column of the first row a query of the server's own database answers."""
        return self.rows(statement, params)[0][0]

    def rows(self, statement: str, params: tuple) -> list[tuple]:
        """Every row a query of the server's own database answers."""
        if self.database_url.startswith("sqlite"):
            import sqlite3

            with sqlite3.connect(self.database_url.removeprefix("sqlite:///")) as conn:
                return conn.execute(statement, params).fetchall()
        import psycopg2

        conn = psycopg2.connect(self.database_url)
        try:
            with conn.cursor() as cursor:
                cursor.execute(statement.replace("?", "%s"), params)
                return cursor.fetchall()
        finally:
            conn.close()

    def sql(self, statement: str, params: tuple) -> None:
        """Time travel on the server's own rows (an expiry in the past), in its own database."""
        if self.database_url.startswith("sqlite"):
            import sqlite3

            with sqlite3.connect(self.database_url.removeprefix("sqlite:///")) as conn:
                conn.execute(statement, params)
        else:
            import psycopg2

            conn = psycopg2.connect(self.database_url)
            with conn, conn.cursor() as cursor:
                cursor.execute(statement.replace("?", "%s"), params)
            conn.close()


def _env(database_url: str, port: int) -> dict:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("TEST_", "PYTEST", "DATABASE_URL", "REDIS_URL"))}
    env.update({
        "DATABASE_URL": database_url, "PYTHONPATH": str(ROOT), "SWAP_PROVIDER": "sandbox",
        "PUBLIC_BASE_URL": f"http://127.0.0.1:{port}", "HOST": "127.0.0.1", "PORT": str(port),
        "WEB_CONCURRENCY": "1", "WEB_THREADS": "8", "LOG_LEVEL": "WARNING",
        "CHAIN_POLL_INTERVAL_SECONDS": "1", "SETTLEMENT_POLL_INTERVAL_SECONDS": "1",
        "EXPIRY_SWEEP_INTERVAL_SECONDS": "1",
        "ALLOW_PRIVATE_WEBHOOK_URLS": "1",        # the dashboard's walk sends webhooks to a closed local port
    })
    if os.environ.get("TEST_REDIS_URL"):
        env["REDIS_URL"] = os.environ["TEST_REDIS_URL"]
    return env


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("browser")
    port = free_port()
    env = _env(sibling_database("browser", workdir), port)
    redis_url = env.get("REDIS_URL")
    if redis_url:
        import redis

        redis.Redis.from_url(redis_url).flushdb()
    flask = [str(BIN / "flask"), "--app", "wsgi"]
    subprocess.run(flask + ["db", "upgrade"], cwd=ROOT, env=env, check=True, capture_output=True)
    wallet = "lumen-coffee.near"
    created = subprocess.run(flask + ["stores", "create", "--name", "Lumen Coffee", "--payout-wallet", wallet,
                                      "--json"], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    store = json.loads(created.stdout.strip().splitlines()[-1])
    commands = [[str(BIN / "gunicorn"), "--config", "gunicorn.conf.py", "wsgi:app"]]
    if redis_url:      # the real stack: jobs run in their own processes, as in production
        commands += [[str(BIN / "rq"), "worker", "--url", redis_url, "--worker-class", "rq.worker.SimpleWorker",
                      "--dequeue-strategy", "round_robin", "webhooks", "chain", "settlement", "maintenance"],
                     [str(BIN / "rq"), "cron", "--url", redis_url, "scheduler/cron.py"]]
    log = open(workdir / "server.log", "ab")
    processes = [subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True)
                 for argv in commands]
    base_url = f"http://127.0.0.1:{port}"

    def healthy():
        assert processes[0].poll() is None, (workdir / "server.log").read_text()[-2000:]
        try:
            return requests.get(base_url + "/health", timeout=1).status_code == 200
        except requests.RequestException:     # refused, or the worker still booting (a read timeout)
            return False

    try:
        wait_for(healthy, timeout=30, what="gunicorn to answer /health")
        yield Server(base_url, env["DATABASE_URL"], store["api_key"], store["store_id"], wallet)
    finally:
        for process in processes:          # by PID: only what this fixture started
            if process.poll() is None:
                os.kill(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait(timeout=5)
        log.close()


@pytest.fixture(scope="module")
def browser():
    with launched() as chromium:
        yield chromium


class Pages:
    """Opens pages at desktop or phone width, records console errors (a CSP violation is one),
    and saves screenshots (into docs/screenshots/ with SCREENSHOTS=docs)."""

    def __init__(self, browser):
        self.browser = browser
        self.contexts = []
        self.console_errors: list[str] = []

    def open(self, url: str, *, viewport=DESKTOP):
        context = self.browser.new_context(viewport=viewport, device_scale_factor=1,
                                           is_mobile=viewport is PHONE, has_touch=viewport is PHONE)
        self.contexts.append(context)
        page = context.new_page()
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.console_errors.append(str(error)))
        page.response = page.goto(url)
        return page

    def _console(self, message) -> None:
        # A refused request the page expects (a 400 it explains, a 404 page) is logged as an error
        # too; script errors and CSP violations ("Refused to …") are what must never happen.
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.console_errors.append(message.text)

    @staticmethod
    def assert_accessible(page, state: str, impacts=AXE_FAILS) -> None:
        """axe-core on the page as it is now: no serious or critical violation (colour contrast AA,
        names, labels, ARIA); `impacts=None`: no violation at all. Run in the page through the
        DevTools protocol, which the page's CSP allows."""
        if not AXE.exists():
            message = f"{AXE.relative_to(ROOT)} is missing: run `npm ci` (`make test` does where npm is installed)"
            if os.environ.get("CI"):
                pytest.fail(message)      # CI must not pass without the accessibility checks
            pytest.skip(message)
        if not page.evaluate("typeof axe !== 'undefined'"):
            page.evaluate(AXE.read_text())
        # Started, then waited for with a deadline: `evaluate` itself has none, and a run that never
        # settles must fail the test, not hang the suite.
        page.evaluate("() => { window.__axeResults = null; axe.run(document, {resultTypes: ['violations']})"
                      ".then(r => { window.__axeResults = r; }, e => { window.__axeResults = {error: String(e)}; }); }")
        page.wait_for_function("() => window.__axeResults !== null", timeout=AXE_TIMEOUT_MS, polling=100)
        results = page.evaluate("window.__axeResults")
        assert "error" not in results, f"axe-core on {state}: {results['error']}"
        failures = [(v["id"], v["impact"], [node["target"] for node in v["nodes"]][:3])
                    for v in results["violations"] if impacts is None or v["impact"] in impacts]
        assert not failures, f"axe-core on {state}: {failures}"

    @staticmethod
    def assert_keyboard_reachable(page, state: str) -> list[str]:
        """Tab from the top reaches every visible control, in order; returns the order."""
        controls = page.evaluate(CONTROLS_JS)
        page.evaluate("document.activeElement && document.activeElement.blur()")
        reached = []
        # A date field takes one Tab per part (day, month, year): a bounded number of presses more.
        for _ in range(3 * len(controls) + 2):
            page.keyboard.press("Tab")
            reached.append(page.evaluate(
                "(el => el === document.body ? null : el.id || el.getAttribute('aria-label') || el.textContent.trim())"
                "(document.activeElement)"))
            if set(controls) <= set(reached):
                break
        missing = [control for control in controls if control not in reached]
        assert not missing, f"{state}: not reachable with Tab: {missing} (reached {reached})"
        return reached

    @staticmethod
    def screenshot(page, name: str) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True, animations="disabled",
                        caret="hide")

    def close(self):
        for context in self.contexts:
            context.close()


@pytest.fixture
def pages(browser):
    opened = Pages(browser)
    yield opened
    opened.close()
