"""Where webhooks and legacy callbacks may go (docs/webhooks.md#endpoints-scopes-webhooksread-webhookswrite): one table of addresses,
and name resolution on the request path bounded to 2 s."""
from __future__ import annotations

import dataclasses
import socket
import threading

import pytest

from core.errors import DomainError
from services.webhooks import webhook_urls

# (address in the URL's host, refused?)
ADDRESSES = [
    ("93.184.216.34", False), ("[2606:4700:4700::1111]", False),
    ("[2002:5db8:d822::1]", False),                 # 6to4 around a public IPv4 address
    ("127.0.0.1", True), ("[::1]", True), ("10.0.0.1", True), ("192.168.1.1", True), ("172.16.0.1", True),
    ("169.254.169.254", True), ("224.0.0.1", True), ("100.64.0.1", True), ("0.0.0.0", True),
    ("192.0.2.1", True),                            # documentation
    ("[::ffff:127.0.0.1]", True), ("[::ffff:10.0.0.1]", True),     # IPv4-mapped
    ("[::10.0.0.1]", True), ("[::8.8.8.8]", True),                 # IPv4-compatible (deprecated)
    ("[64:ff9b::a00:1]", True), ("[64:ff9b::808:808]", True),      # NAT64
    ("[2002:a00:1::1]", True), ("[2002:7f00:1::1]", True),         # 6to4 around private / loopback
    ("[2001:0:4136:e378:8000:63bf:f5ff:fffe]", True),              # Teredo around 10.0.0.1
    ("[fec0::1]", True),                                           # site-local (deprecated)
    ("[fc00::1]", True), ("[fe80::1]", True),
    ("192.0.0.8", True), ("192.0.0.170", True),                    # IETF protocol assignments
    ("168.63.129.16", True),                                       # Azure's metadata and DNS service
]


@pytest.mark.parametrize("host, refused", ADDRESSES, ids=[host for host, _ in ADDRESSES])
def test_the_address_rules(host, refused):
    url = f"https://{host}/hook"
    if refused:
        with pytest.raises(DomainError) as error:
            webhook_urls.check_target_url(url, allow_private=False)
        assert error.value.code == "invalid_webhook_url"
    else:
        assert webhook_urls.check_target_url(url, allow_private=False) == url
    ip = host.strip("[]")
    assert (webhook_urls.refused_address(ip) is not None) == refused     # the delivery-time check agrees


@pytest.fixture
def strict(app, settings, monkeypatch):
    """The app without ALLOW_PRIVATE_WEBHOOK_URLS (the tests' default lifts the rules)."""
    monkeypatch.setitem(app.extensions, "tender.settings",
                        dataclasses.replace(settings, allow_private_webhook_urls=False))


@pytest.mark.parametrize("host", ["10.0.0.1", "[64:ff9b::a00:1]", "168.63.129.16"])
def test_a_callback_url_obeys_the_same_rules_at_create(client, auth, strict, host):
    response = client.post("/v1/invoices", headers=auth, json={
        "amount": "10.00", "callback_url": f"https://{host}/cb"})
    assert response.status_code == 400
    assert response.json["code"] == "validation_error" and response.json["details"]["param"] == "callback_url"
    fine = client.post("/v1/invoices", headers=auth, json={"amount": "10.00", "callback_url": "https://93.184.216.34/cb"})
    assert fine.status_code == 201, fine.json


def test_a_name_whose_dns_never_answers_costs_a_request_at_most_2_s(client, auth, strict, monkeypatch):
    endpoint = client.post("/v1/webhook-endpoints", headers=auth,
                           json={"url": "https://93.184.216.34/hook", "events": ["*"]}).json
    release, resolver_answered = threading.Event(), threading.Event()
    real = socket.getaddrinfo

    def stalling(host, *args, **kwargs):
        if host != "stalls.example":
            return real(host, *args, **kwargs)
        release.wait(60)                   # answers only once the request below has been answered
        resolver_answered.set()
        return []

    monkeypatch.setattr(socket, "getaddrinfo", stalling)
    try:
        response = client.patch(f"/v1/webhook-endpoints/{endpoint['id']}", headers=auth,
                                json={"url": "https://stalls.example/hook"})
        # Counted in events, not seconds (a loaded machine's times vary): the answer came while the
        # resolver was still stalled, so the request gave up on it rather than waiting it out.
        assert not resolver_answered.is_set()
    finally:
        release.set()
    assert response.status_code == 422 and response.json["error"]["code"] == "invalid_webhook_url"
    assert "did not resolve within 2 s" in response.json["error"]["message"]


# Hosts that are not plain hosts: the rule reads the parsed host, so a resolver's view of them (a
# zone id, a decoded %00 that resolves to 127.0.0.1 here, a trailing-dot name) never differs from
# what was checked. Refused even with ALLOW_PRIVATE_WEBHOOK_URLS=1: they are malformed, not private.
MALFORMED_HOSTS = ["[fe80::1%25eth0]", "[::1%25lo]", "localhost%00.example.com", "x%09y.example.com",
                   "example.com:0", "LOCALHOST.", "example.com.", "127.1", "0x7f000001", "a\"onmouseover=\"x"]


@pytest.mark.parametrize("allow_private", [False, True])
@pytest.mark.parametrize("host", MALFORMED_HOSTS)
def test_hosts_that_are_not_plain_hosts_are_refused(host, allow_private):
    with pytest.raises(DomainError) as error:
        webhook_urls.check_target_url(f"https://{host}/hook", allow_private=allow_private)
    assert error.value.code == "invalid_webhook_url" and error.value.param == "url"


@pytest.mark.parametrize("host", ["localhost%00.example.com", "[::1%25lo]", "LOCALHOST.", "example.com:0"])
def test_a_webhook_endpoint_or_callback_url_with_such_a_host_is_refused(client, auth, strict, host):
    endpoint = client.post("/v1/webhook-endpoints", headers=auth, json={"url": f"https://{host}/h", "events": ["*"]})
    assert endpoint.status_code == 422 and endpoint.json["error"]["code"] == "invalid_webhook_url"
    invoice = client.post("/v1/invoices", headers=auth, json={"amount": "10.00", "callback_url": f"https://{host}/cb"})
    assert invoice.status_code == 400 and invoice.json["details"]["param"] == "callback_url"
