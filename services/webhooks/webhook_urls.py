"""Where webhooks may go (docs/webhooks.md): `https://` only, never to loopback, private, link-local,
multicast or other non-public addresses. Checked when an endpoint is saved and again at the
moment of each connection, on the address actually dialled, so a host that re-points its DNS
at an internal address after it was accepted (DNS rebinding) is still refused.
`ALLOW_PRIVATE_WEBHOOK_URLS=1` lifts both rules (development and tests only)."""
from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

import requests.certs
import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import NewConnectionError
from urllib3.util import connection as urllib3_connection

from core import deadlines, urls
from core.errors import Unprocessable

MAX_URL_LENGTH = 2048
RESOLVE_SECONDS = 2.0      # name resolution on a request path (a web thread waits for it)


# Addresses Python calls global that webhooks must still not reach: translation prefixes that
# route to IPv4 space (NAT64), deprecated forms (site-local, IPv4-compatible), the IETF protocol
# block and cloud metadata services.
_REFUSED_NETWORKS = tuple((label, ipaddress.ip_network(network)) for label, network in (
    ("NAT64", "64:ff9b::/96"), ("NAT64", "64:ff9b:1::/48"), ("site-local", "fec0::/10"),
    ("IPv4-compatible", "::/96"), ("IETF protocol", "192.0.0.0/24"),
    ("cloud metadata", "168.63.129.16/32"), ("cloud metadata", "169.254.169.254/32"),
    ("cloud metadata", "fd00:ec2::254/128"),
))


def refused_address(address: str) -> str | None:
    """Why connecting to this IP address is refused, or None when it is a public address."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for label, flag in (("loopback", ip.is_loopback), ("link-local", ip.is_link_local),
                        ("multicast", ip.is_multicast), ("private", ip.is_private)):
        if flag:
            return f"{address} is a {label} address"
    for label, network in _REFUSED_NETWORKS:
        if ip.version == network.version and ip in network:
            return f"{address} is a {label} address"
    for embedded in _embedded_ipv4(ip):
        if refused_address(str(embedded)):
            return f"{address} embeds the non-public address {embedded}"
    if not ip.is_global:
        return f"{address} is not a public address"
    return None


def _embedded_ipv4(ip) -> list:
    """The IPv4 addresses a 6to4 or Teredo address carries (a relay would deliver to them)."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return []
    embedded = [ip.sixtofour] if ip.sixtofour is not None else []
    if ip.teredo is not None:
        embedded.extend(ip.teredo)
    return embedded


def resolve(host: str, port: int, *, timeout: float = RESOLVE_SECONDS) -> list[str]:
    return deadlines.resolve(host, port, timeout=timeout)


def check_target_url(url: str, *, allow_private: bool, param: str = "url") -> str:
    """Validate a webhook target on create/update; a refused URL is 422 invalid_webhook_url.

    A host name that does not resolve right now is accepted (it may be set up later); the
    delivery-time check refuses it if it then points somewhere private."""
    def refuse(reason):
        return Unprocessable("invalid_webhook_url", f"{param}: {reason}", param=param)

    if not isinstance(url, str) or not url or len(url) > MAX_URL_LENGTH or any(ord(c) <= 32 for c in url):
        raise refuse(f"must be a URL of at most {MAX_URL_LENGTH} characters without spaces")
    problem = urls.address_problem(url)       # the host as parsed: no zone id, %-bytes, port 0, trailing dot
    if problem:
        raise refuse(problem)
    parts = urlsplit(url)
    schemes = ("http", "https") if allow_private else ("https",)
    if parts.scheme not in schemes:
        raise refuse("must be an https:// URL" if not allow_private else "must be an http(s):// URL")
    if allow_private:
        return url
    try:
        addresses = resolve(parts.hostname, parts.port or 443)
    except deadlines.ResolutionTimeout:
        raise refuse(f"{parts.hostname} did not resolve within {RESOLVE_SECONDS:g} s") from None
    except (socket.gaierror, UnicodeError):
        return url
    for address in addresses:
        reason = refused_address(address)
        if reason:
            raise refuse(f"must not point at a loopback, private, link-local, multicast or other "
                         f"non-public address ({reason})")
    return url


class AddressRefused(NewConnectionError):
    """The host resolved to an address webhooks may not reach."""

    def __init__(self, conn, message: str):
        super().__init__(conn, message)
        self.refusal = message


class _DeadlineConnectionMixin:
    """Resolve with a bound, dial, and put every socket under the attempt's hard deadline
    (core/deadlines.py); the guarded variant also checks each address before dialling."""

    check_addresses = False

    def _new_conn(self):
        deadline = deadlines.current()
        budget = deadline.remaining() if deadline else RESOLVE_SECONDS
        try:
            addresses = resolve(self._dns_host, self.port, timeout=min(budget, RESOLVE_SECONDS))
        except OSError as error:
            raise NewConnectionError(self, f"could not resolve {self._dns_host}: {error}") from error
        if self.check_addresses:
            for address in addresses:
                reason = refused_address(address)
                if reason:
                    raise AddressRefused(self, f"refused: {self._dns_host} resolves to {reason}")
        last_error = None
        for address in addresses:
            timeout = self.timeout if deadline is None else min(self.timeout or deadline.seconds,
                                                                 deadline.remaining())
            try:
                sock = urllib3_connection.create_connection(
                    (address, self.port), timeout, source_address=self.source_address,
                    socket_options=self.socket_options)
            except OSError as error:
                last_error = error
                continue
            if deadline is not None:
                sock.settimeout(max(deadline.remaining(), 0.001))    # bounds the TLS handshake as a whole
                deadline.watch(sock)
            return sock
        raise NewConnectionError(self, f"Failed to establish a new connection: {last_error}")

    def request(self, *args, **kwargs):
        deadline = deadlines.current()
        if deadline is not None and self.sock is not None:      # a kept-alive connection
            deadline.watch(self.sock)
        return super().request(*args, **kwargs)


class _DeadlineHTTPConnection(_DeadlineConnectionMixin, HTTPConnection):
    pass


class _DeadlineHTTPSConnection(_DeadlineConnectionMixin, HTTPSConnection):
    pass


class _GuardedHTTPConnection(_DeadlineHTTPConnection):
    check_addresses = True


class _GuardedHTTPSConnection(_DeadlineHTTPSConnection):
    check_addresses = True


def _pool_classes(http_connection, https_connection) -> dict:
    return {"http": type("Pool", (HTTPConnectionPool,), {"ConnectionCls": http_connection}),
            "https": type("Pool", (HTTPSConnectionPool,), {"ConnectionCls": https_connection})}


_DEADLINE_POOLS = _pool_classes(_DeadlineHTTPConnection, _DeadlineHTTPSConnection)
_GUARDED_POOLS = _pool_classes(_GuardedHTTPConnection, _GuardedHTTPSConnection)


def delivery_pool(*, allow_private: bool, pool_size: int, ca_bundle: str | None = None) -> urllib3.PoolManager:
    """Connections for webhook deliveries, used through urllib3 directly (requests' layers above
    it cost a quarter of a post to a quick receiver): reused per host, every attempt's sockets
    under its hard deadline, the address guard unless private is allowed, the public CAs that
    requests trusts (`ca_bundle` replaces them: tests with their own CA only), no proxies, no
    retries, no redirects."""
    manager = urllib3.PoolManager(num_pools=pool_size, maxsize=pool_size, cert_reqs="CERT_REQUIRED",
                                  ca_certs=ca_bundle or requests.certs.where(), retries=False)
    manager.pool_classes_by_scheme = dict(_DEADLINE_POOLS if allow_private else _GUARDED_POOLS)
    return manager
