"""One client is an IPv4 address or an IPv6 /64 (core/client_addresses.py)."""
import pytest

from core.client_addresses import client_of


@pytest.mark.parametrize("address, client", [
    ("203.0.113.9", "203.0.113.9"),
    ("2001:db8:1:2:a:b:c:d", "2001:db8:1:2::/64"),
    ("2001:db8:1:2::ffff", "2001:db8:1:2::/64"),       # another address of the same /64: the same client
    ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
    ("::ffff:203.0.113.9", "203.0.113.9"),              # IPv4 on a dual-stack socket
    ("fe80::1%eth0", "fe80::/64"),
    ("", "unknown"),
    (None, "unknown"),
    ("not-an-address", "not-an-address"),
])
def test_a_client_is_an_ipv4_address_or_an_ipv6_slash_64(address, client):
    assert client_of(address) == client
