"""Buyer-facing URLs, built from settings so web handlers and jobs render the same JSON; and the
rule every URL a client gives us must meet about its host (`address_problem`)."""
import ipaddress
import re
from urllib.parse import urlsplit

_base = {"checkout": "http://localhost:8000"}


def configure(checkout_base_url: str) -> None:
    _base["checkout"] = checkout_base_url.rstrip("/")


def checkout_url(invoice_public_id: str) -> str:
    return f"{_base['checkout']}/checkout/{invoice_public_id}"


def refund_funding_url(refund_public_id: str) -> str:
    """The merchant's page for funding a refund (docs/refunds.md)."""
    return f"{_base['checkout']}/fund/{refund_public_id}"


def payment_link_url(public_id: str) -> str:
    return f"{_base['checkout']}/pay/{public_id}"


def checkout_base_url() -> str:
    return _base["checkout"]


# A DNS label: letters, digits, `-` (not at either end) and `_` (some real host names carry one).
_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")


def address_problem(url: str) -> str | None:
    """Why the address part of an absolute URL (`//host:port`) is not a plain host, or None.

    Read on the parsed host, so what a resolver or a browser would make of it can not differ from
    what was checked: no credentials, a port from 1 to 65535, and a host that is a dotted-quad IPv4
    address, a bracketed IPv6 address without a zone id, or a DNS name without a trailing dot.
    Percent-encoded bytes (`localhost%00.example.com`) and zone ids (`[fe80::1%25eth0]`) are refused:
    resolvers decode them in ways the name check never saw."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "has an invalid host or port"
    if "@" in parts.netloc:
        return "must not contain credentials"
    if port == 0:
        return "must not use port 0"
    host = parts.hostname
    if not host:
        return "must name a host"
    if "%" in host:
        return "must not hold percent-encoded bytes or an IPv6 zone id in its host"
    if parts.netloc.rpartition("@")[2].startswith("["):
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return "must hold an IPv6 address between [ and ]"
        return None
    if host.endswith("."):
        return "must not end its host name with a dot"
    try:
        ipaddress.IPv4Address(host)
        return None
    except ValueError:
        pass
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        return "must have a valid host name"
    labels = ascii_host.split(".")
    # The last label must start with a letter: `127.1` or `0x7f000001` are addresses to a resolver.
    if not all(_LABEL.match(label) for label in labels) or not labels[-1][0].isalpha() or len(ascii_host) > 253:
        return "must have a valid host name"
    return None
