"""Where webhooks may go (docs/webhooks.md): `https://` only, never to loopback, private, link-local,
multicast or other non-public addresses. Checked when an endpoint is saved and again at the
moment of each connection, on the address actually dialled, so a host that re-points its DNS
at an internal address after it was accepted (DNS rebinding) is still refused.
`ALLOW_PRIVATE_WEBHOOK_URLS=1` lifts both rules (development and tests only)."""
from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import NewConnectionError
from urllib3.util import connection as urllib3_connection

from services.errors import DomainError

MAX_URL_LENGTH = 2048


def refused_address(address: str) -> str | None:
    """Why connecting to this IP address is refused, or None when it is a public address."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for label, flag in (("loopback", ip.is_loopback), ("link-local", ip.is_link_local),
                        ("multicast", ip.is_multicast), ("private", ip.is_private)):
        if flag:
            return f"{address} is a {label} address"
    if not ip.is_global:
        return f"{address} is not a public address"
    return None


def resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(info[4][0] for info in infos))


def check_target_url(url: str, *, allow_private: bool, param: str = "url") -> str:
    """Validate a webhook target on create/update; a refused URL is 422 invalid_webhook_url.

    A host name that does not resolve right now is accepted (it may be set up later); the
    delivery-time check refuses it if it then points somewhere private."""
    def refuse(reason):
        return DomainError("invalid_webhook_url", f"{param}: {reason}", param=param)

    if not isinstance(url, str) or not url or len(url) > MAX_URL_LENGTH or any(ord(c) <= 32 for c in url):
        raise refuse(f"must be a URL of at most {MAX_URL_LENGTH} characters without spaces")
    parts = urlsplit(url)
    schemes = ("http", "https") if allow_private else ("https",)
    try:
        port = parts.port
    except ValueError:
        raise refuse("has an invalid port") from None
    if parts.scheme not in schemes or not parts.hostname:
        raise refuse("must be an https:// URL" if not allow_private else "must be an http(s):// URL")
    if parts.username or parts.password:
        raise refuse("must not contain credentials")
    if allow_private:
        return url
    try:
        addresses = resolve(parts.hostname, port or 443)
    except (socket.gaierror, UnicodeError):
        return url
    for address in addresses:
        reason = refused_address(address)
        if reason:
            raise refuse(f"must not point at a loopback, private, link-local or multicast address ({reason})")
    return url


class AddressRefused(NewConnectionError):
    """The host resolved to an address webhooks may not reach."""

    def __init__(self, conn, message: str):
        super().__init__(conn, message)
        self.refusal = message


class _GuardedConnectionMixin:
    """Resolve, check every address, and dial only a checked one: no gap for DNS to change in."""

    def _new_conn(self):
        try:
            addresses = resolve(self._dns_host, self.port)
        except socket.gaierror as error:
            raise NewConnectionError(self, f"could not resolve {self._dns_host}: {error}") from error
        for address in addresses:
            reason = refused_address(address)
            if reason:
                raise AddressRefused(self, f"refused: {self._dns_host} resolves to {reason}")
        last_error = None
        for address in addresses:
            try:
                return urllib3_connection.create_connection(
                    (address, self.port), self.timeout, source_address=self.source_address,
                    socket_options=self.socket_options)
            except OSError as error:
                last_error = error
        raise NewConnectionError(self, f"Failed to establish a new connection: {last_error}")


class _GuardedHTTPConnection(_GuardedConnectionMixin, HTTPConnection):
    pass


class _GuardedHTTPSConnection(_GuardedConnectionMixin, HTTPSConnection):
    pass


class _GuardedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _GuardedHTTPConnection


class _GuardedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _GuardedHTTPSConnection


class _GuardedAdapter(HTTPAdapter):
    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _GuardedHTTPPool, "https": _GuardedHTTPSPool}


def delivery_session(*, allow_private: bool, pool_size: int) -> requests.Session:
    """A Session for webhook deliveries: no proxies from the environment (they would bypass the
    address check), connection reuse per host, and the address guard unless private is allowed."""
    session = requests.Session()
    session.trust_env = False
    adapter_class = HTTPAdapter if allow_private else _GuardedAdapter
    for prefix in ("http://", "https://"):
        session.mount(prefix, adapter_class(pool_connections=pool_size, pool_maxsize=pool_size, max_retries=0))
    return session
