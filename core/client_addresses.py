"""Which client an address stands for, when counting what one client may do.

An IPv4 address is one client. An IPv6 client is its /64: a home, a phone or a VM is given a whole
/64 and may pick any address in it, so counting per address would give one machine 2^64 budgets.
"""
from __future__ import annotations

import ipaddress


def client_of(address: str | None) -> str:
    """`203.0.113.9` -> itself; `2001:db8:1:2:a:b:c:d` -> `2001:db8:1:2::/64`; `::ffff:203.0.113.9`
    (an IPv4 client on a dual-stack socket) -> `203.0.113.9`. Anything else is its own client."""
    if not address:
        return "unknown"
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])      # a link-local scope (`%eth0`) is not the client
    except ValueError:
        return address
    if ip.version == 6 and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    if ip.version == 6:
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)
