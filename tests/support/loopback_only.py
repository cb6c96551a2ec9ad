"""No name lookups beyond this machine: tests and the fuzzed server must not reach the network.

This machine's resolver is not on loopback, so even a DNS query for a made-up webhook host would
leave it. `install()` makes `socket.getaddrinfo` answer only for IP literals and `localhost`;
any other name fails as "does not resolve" (which the app handles) and is reported.
"""
import ipaddress
import socket

_real_getaddrinfo = socket.getaddrinfo
LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")


def is_local_lookup(host) -> bool:
    if host is None:
        return True
    name = host.decode() if isinstance(host, bytes) else str(host)
    if name.lower() in LOCAL_NAMES:
        return True
    try:
        ipaddress.ip_address(name.split("%")[0])
        return True
    except ValueError:
        return False


def install(refused: list | None = None) -> None:
    """Guard this process's name lookups; names refused are appended to `refused`."""
    def guarded_getaddrinfo(host, *args, **kwargs):
        if not is_local_lookup(host):
            if refused is not None:
                refused.append(host)
            raise socket.gaierror(socket.EAI_NONAME, f"{host}: name lookups are off (loopback only)")
        return _real_getaddrinfo(host, *args, **kwargs)

    socket.getaddrinfo = guarded_getaddrinfo


def uninstall() -> None:
    socket.getaddrinfo = _real_getaddrinfo
