"""Typed readers over the environment, and the error they raise: each message is one line that
starts with the variable's name (config/__init__.py and config/mail.py read through them)."""
from __future__ import annotations

import re
from urllib.parse import urlsplit

from core import currencies

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


class ConfigError(Exception):
    """A configuration variable is missing or malformed; str(error) names it."""


class Env:
    """Typed readers over a mapping; each error message starts with the variable's name."""

    def __init__(self, environ):
        self.environ = environ

    def text(self, name, default=None):
        value = self.environ.get(name)
        return default if value is None or value.strip() == "" else value.strip()

    def choice(self, name, allowed, default, upper=False):
        value = self.text(name, default)
        value = value.upper() if upper else value.lower()
        if value not in allowed:
            raise ConfigError(f"{name}: must be one of {', '.join(allowed)} (got {value!r})")
        return value

    def integer(self, name, default, *, minimum, maximum):
        raw = self.text(name)
        if raw is None:
            return default
        if not re.fullmatch(r"\d+", raw):
            raise ConfigError(f"{name}: must be a whole number (got {raw!r})")
        value = int(raw)
        if not minimum <= value <= maximum:
            raise ConfigError(f"{name}: must be between {minimum} and {maximum} (got {value})")
        return value

    def boolean(self, name, default):
        raw = self.environ.get(name)
        if raw is None:
            return default
        if raw.strip().lower() in _TRUE:
            return True
        if raw.strip().lower() in _FALSE:
            return False
        raise ConfigError(f"{name}: must be 1/0, true/false, yes/no or on/off (got {raw!r})")

    def url(self, name, default):
        value = self.text(name, default).rstrip("/")
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"{name}: must be an http:// or https:// URL (got {value!r})")
        return value

    def database_url(self, name, default):
        value = self.text(name, default)
        if value.startswith("sqlite:///") and len(value) > len("sqlite:///"):
            return value
        if value.startswith(("postgres://", "postgresql://")):
            # libpq's own reading (multi-host lists, ?sslmode=…, ?target_session_attrs=…), as the
            # connection will read it (models/base.py).
            from psycopg2.extensions import parse_dsn
            try:
                params = parse_dsn(value)
            except Exception as error:
                raise ConfigError(f"{name}: not a PostgreSQL URL libpq can read ({redact(str(error).strip())}) "
                                  f"(got {redact(value)!r})") from None
            ports = params.get("port", "5432").split(",")
            if params.get("host") and params.get("dbname") and all(port.isdigit() for port in ports):
                return value
        raise ConfigError(f"{name}: must be postgresql://user@host:port/dbname (libpq parameters after ?, several "
                          f"hosts as host1:port1,host2:port2), postgres://… or sqlite:///path (got {redact(value)!r})")

    def redis_url(self, name):
        value = self.text(name)
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme in ("redis", "rediss", "unix") and (parts.hostname or parts.path):
            return value
        raise ConfigError(f"{name}: must be a redis://host:port/db URL, or unset (REDIS_SENTINELS instead, or neither for the embedded default) (got {redact(value)!r})")

    def host_ports(self, name, raw):
        """`host:port,host:port` (IPv6 as [addr]:port), each port given: 1 to 16 of them."""
        pairs = []
        for part in (part.strip() for part in raw.split(",")):
            match = re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):(\d{1,5})", part)
            if match is None or not 1 <= int(match.group(2)) <= 65535:
                raise ConfigError(f"{name}: must be comma-separated host:port pairs (got {part!r} in {raw!r})")
            pairs.append((match.group(1).strip("[]"), int(match.group(2))))
        if not 1 <= len(pairs) <= 16:
            raise ConfigError(f"{name}: must list 1 to 16 host:port pairs (got {len(pairs)})")
        return tuple(pairs)

    def seconds_list(self, name, default):
        raw = self.text(name)
        if raw is None:
            return default
        parts = [part.strip() for part in raw.split(",")]
        if len(parts) > 20 or not all(re.fullmatch(r"\d{1,7}", part) for part in parts):
            raise ConfigError(f"{name}: must be up to 20 comma-separated whole numbers of seconds (got {raw!r})")
        return tuple(int(part) for part in parts)

    def currencies(self, name, default):
        raw = self.text(name)
        if raw is None:
            return default
        codes = tuple(code.strip().upper() for code in raw.split(",") if code.strip())
        if not codes or any(not currencies.is_currency(code) for code in codes):
            raise ConfigError(f"{name}: must be comma-separated ISO 4217 currency codes (got {raw!r})")
        return codes


def redact(url: str) -> str:
    """Hide a password in a URL before it is printed in an error."""
    return re.sub(r"//([^:/@]*):[^@]*@", r"//\1:***@", url)   # user may be empty: redis://:pw@host
