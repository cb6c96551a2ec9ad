"""A real WordPress for the WooCommerce plugin's tests: Debian's `wordpress` package on MariaDB,
served by `php -S` on an ephemeral 127.0.0.1 port, with the plugin installed from the zip
merchants get (`make woocommerce-zip`) and the WooCommerce stand-in
(plugins/woocommerce/tests/standin/; CI cannot download WooCommerce).

With WORDPRESS_DIR and WOOCOMMERCE_DIR naming a WordPress and a WooCommerce the merchant
downloaded (unpacked release folders), the same site is built from them instead, and
WOOCOMMERCE_HPOS=1 or 0 turns WooCommerce's custom order tables on or off (unset: WooCommerce's
default). Nothing of either is kept in this repository.

The site is a folder of links to /usr/share/wordpress beside its own wp-config.php and
wp-content; plugins/woocommerce/tests/wordpress/router.php makes WordPress load that config.
MariaDB: WP_TEST_DB_HOST (127.0.0.1:3306), WP_TEST_DB_USER (root), WP_TEST_DB_PASSWORD (empty);
the database is WP_TEST_DB_NAME, by default `wp_` + the name of TEST_DATABASE_URL's database
(`wp_tender_test_29`), so engineers sharing a machine never share a site."""
from __future__ import annotations

import json
import os
from pathlib import Path
import secrets
import shutil
import signal
import socket
import subprocess
import time
from urllib.parse import urlsplit
import zipfile

from tests.support.polling import free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]
WORDPRESS = Path(os.environ.get("WORDPRESS_DIR") or "/usr/share/wordpress")
WOOCOMMERCE_DIR = os.environ.get("WOOCOMMERCE_DIR")
REAL_WOOCOMMERCE = bool(WOOCOMMERCE_DIR)
HARNESS = ROOT / "plugins" / "woocommerce" / "tests" / "wordpress"
STANDIN = ROOT / "plugins" / "woocommerce" / "tests" / "standin" / "woocommerce"
PLUGIN_DIR = ROOT / "plugins" / "woocommerce" / "tender-for-woocommerce"
PLUGIN_FILE = "tender-for-woocommerce/tender-for-woocommerce.php"
ADMIN_PASSWORD = "admin-" + secrets.token_hex(8)


def missing() -> str | None:
    """Why the real-WordPress tests cannot run here, or None."""
    if not shutil.which("php"):
        return "php-cli is missing (apt-get install php-cli php-mysql; .ci/run installs them)"
    if not (WORDPRESS / "wp-settings.php").exists():
        return (f"WORDPRESS_DIR={WORDPRESS} holds no WordPress" if os.environ.get("WORDPRESS_DIR") else
                "Debian's wordpress package is missing (apt-get install wordpress; .ci/run installs it)")
    if REAL_WOOCOMMERCE and not (Path(WOOCOMMERCE_DIR) / "woocommerce.php").exists():
        return f"WOOCOMMERCE_DIR={WOOCOMMERCE_DIR} holds no WooCommerce"
    if subprocess.run(["php", "-r", "exit(extension_loaded('mysqli') ? 0 : 1);"]).returncode:
        return "php-mysql is missing (apt-get install php-mysql)"
    host, port = _db_host()
    try:
        socket.create_connection((host, port), timeout=2).close()
    except OSError:
        return f"MariaDB does not answer on {host}:{port} (.ci/run starts it)"
    return None


def _db_host() -> tuple[str, int]:
    host, _, port = os.environ.get("WP_TEST_DB_HOST", "127.0.0.1:3306").partition(":")
    return host, int(port or 3306)


def database_name() -> str:
    if os.environ.get("WP_TEST_DB_NAME"):
        return os.environ["WP_TEST_DB_NAME"]
    test_url = os.environ.get("TEST_DATABASE_URL")
    return "wp_" + (urlsplit(test_url).path.lstrip("/") if test_url else "tender_test_embedded")


def build_zip(out_dir: Path) -> Path:
    """The installable zip, built as `make woocommerce-zip` builds it."""
    from scripts.woocommerce_zip import build

    out = out_dir / "tender-for-woocommerce.zip"
    build(PLUGIN_DIR, out)
    return out


class WordPressSite:
    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.docroot = workdir / "site"
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.host}"
        self.webhook_url = f"{self.url}/?wc-api=tender"
        self.probe_file = workdir / "deliveries.jsonl"
        self.process: subprocess.Popen | None = None
        self.shop: dict = {}

    # -- building and starting ---------------------------------------------------------------
    def _layout(self) -> None:
        self.docroot.mkdir(parents=True)
        for entry in WORDPRESS.iterdir():
            if entry.name not in ("wp-config.php", "wp-content"):
                (self.docroot / entry.name).symlink_to(entry)
        content = self.docroot / "wp-content"
        (content / "plugins").mkdir(parents=True)
        (content / "mu-plugins").mkdir()
        (content / "themes").symlink_to(WORDPRESS / "wp-content" / "themes")
        (content / "plugins" / "woocommerce").symlink_to(Path(WOOCOMMERCE_DIR) if REAL_WOOCOMMERCE else STANDIN)
        with zipfile.ZipFile(build_zip(self.workdir)) as archive:      # the merchant's zip, unpacked
            archive.extractall(content / "plugins")
        (content / "mu-plugins" / "tender-test-probe.php").symlink_to(HARNESS / "mu-probe.php")
        host, port = _db_host()
        constants = {
            "DB_NAME": database_name(), "DB_USER": os.environ.get("WP_TEST_DB_USER", "root"),
            "DB_PASSWORD": os.environ.get("WP_TEST_DB_PASSWORD", ""), "DB_HOST": f"{host}:{port}",
            "DB_CHARSET": "utf8mb4", "DB_COLLATE": "", "WP_HOME": self.url, "WP_SITEURL": self.url,
            "WP_CONTENT_DIR": str(content), "WP_CONTENT_URL": f"{self.url}/wp-content",
            "TENDER_TEST_PROBE_FILE": str(self.probe_file), "WP_DEBUG_LOG": str(self.workdir / "debug.log"),
            "TENDER_TEST_HPOS": os.environ.get("WOOCOMMERCE_HPOS", ""),
            **{name: secrets.token_hex(32) for name in ("AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY",
                                                          "AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT",
                                                          "NONCE_SALT")},
        }
        lines = ["<?php", "// A test site (tests/support/wordpress.py): nothing leaves 127.0.0.1."]
        lines += [f"define( '{name}', '{value}' );" for name, value in constants.items()]
        lines += ["define( 'WP_DEBUG', true );", "define( 'WP_DEBUG_DISPLAY', false );",
                  "define( 'DISABLE_WP_CRON', true );", "define( 'AUTOMATIC_UPDATER_DISABLED', true );",
                  "define( 'WP_HTTP_BLOCK_EXTERNAL', true );", "$table_prefix = 'wp_';",
                  "if ( ! defined( 'ABSPATH' ) ) { define( 'ABSPATH', __DIR__ . '/' ); }",
                  "require_once ABSPATH . 'wp-settings.php';", ""]
        (self.docroot / "wp-config.php").write_text("\n".join(lines))

    def start(self) -> "WordPressSite":
        self._layout()
        self.cli("create-database")
        self.cli("install", ADMIN_PASSWORD)
        assert self.cli("activate", "woocommerce/woocommerce.php")["activated"]
        self.shop = self.cli("shop-setup")        # a real WooCommerce: currency, pages, HPOS
        assert self.cli("activate", PLUGIN_FILE)["activated"]
        log = open(self.workdir / "php-server.log", "ab")
        env = {**os.environ, "PHP_CLI_SERVER_WORKERS": "4"}
        self.process = subprocess.Popen(["php", "-S", self.host, "-t", str(self.docroot), str(HARNESS / "router.php")],
                                        cwd=self.docroot, env=env, stdout=log, stderr=log, start_new_session=True)

        def listening():
            assert self.process.poll() is None, (self.workdir / "php-server.log").read_text()[-2000:]
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return True
            except OSError:
                return False
        wait_for(listening, timeout=20, what="php -S to listen")
        return self

    def stop(self) -> None:
        """Stop the server and its PHP_CLI_SERVER_WORKERS children: they are forked workers of the
        session this site started (start_new_session), so signalling that process group, and only it,
        ends them all; signalling the parent alone left the workers running."""
        if self.process is None:
            return
        group = self.process.pid
        for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            try:
                os.killpg(group, sig)
            except ProcessLookupError:
                break
            if _group_gone(self.process, timeout=grace):
                break
        if self.process.poll() is None:
            self.process.wait(timeout=5)

    # -- looking inside ---------------------------------------------------------------------
    def cli(self, command: str, *args: str):
        done = subprocess.run(["php", str(HARNESS / "cli.php"), str(self.docroot), self.host, command, *args],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"cli.php {command}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
        return json.loads(done.stdout.strip().splitlines()[-1])

    def option(self, name: str):
        return self.cli("option", name)["value"]

    def order(self, order_id: int) -> dict:
        return self.cli("order", str(order_id))

    def seen_events(self) -> list[str]:
        return self.cli("seen-events")

    def deliveries(self) -> list[dict]:
        """What the test probe recorded of each request to ?wc-api=tender: headers and answer."""
        if not self.probe_file.exists():
            return []
        return [json.loads(line) for line in self.probe_file.read_text().splitlines() if line]

    def php_errors(self) -> str:
        log = self.workdir / "debug.log"
        return log.read_text() if log.exists() else ""


def _group_gone(leader: subprocess.Popen, *, timeout: float) -> bool:
    """True once no process of the group `leader` started is left (the leader reaped here, so it is
    no zombie still counted in its group; its orphaned workers are reaped by init)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        leader.poll()
        try:
            os.killpg(leader.pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False
