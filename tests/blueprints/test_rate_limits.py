"""Rate limits (docs/api.md#rate-limits): counters in Redis, modes, headers, shapes, and failing open."""
import dataclasses
import logging

import pytest

from infra import queues, rate_limits
from tests import factories


@pytest.fixture
def limits(app, settings, monkeypatch):
    """Run the app with other rate-limit settings for one test."""
    def apply(**overrides):
        monkeypatch.setitem(app.extensions, "tender.settings", dataclasses.replace(settings, **overrides))
    return apply


def _create(client, auth):
    return client.post("/v1/invoices", json={"amount": "5.00"}, headers=auth)


def test_write_bucket_enforces_per_key_with_headers_and_the_legacy_shape_on_create_invoice(client, auth, limits):
    limits(rate_limit_write_per_minute=2)
    first, second, third = (_create(client, auth) for _ in range(3))

    assert [r.status_code for r in (first, second)] == [201, 201]
    assert first.headers["RateLimit-Limit"] == "2"
    assert [first.headers["RateLimit-Remaining"], second.headers["RateLimit-Remaining"]] == ["1", "0"]
    assert third.status_code == 429
    assert third.json["code"] == "rate_limited"                     # legacy shape: create invoice
    assert third.json["details"]["request_id"] == third.headers["X-Request-Id"]
    assert 0 < int(third.headers["Retry-After"]) <= 60
    assert third.headers["RateLimit-Remaining"] == "0"


def test_a_refused_write_on_another_route_answers_the_standard_shape(client, auth, store, limits):
    invoice = factories.make_invoice(store)
    limits(rate_limit_write_per_minute=1)
    assert _create(client, auth).status_code == 201

    response = client.post(f"/v1/invoices/{invoice.public_id}/cancel", headers=auth)

    assert response.status_code == 429
    assert response.json["error"]["type"] == "rate_limited"
    assert response.json["error"]["code"] == "rate_limited"


def test_each_key_has_its_own_window(client, auth, other_auth, limits):
    limits(rate_limit_write_per_minute=1)
    assert _create(client, auth).status_code == 201
    assert _create(client, auth).status_code == 429
    assert _create(client, other_auth).status_code == 201


def test_read_bucket_in_observe_mode_counts_and_shows_headers_but_never_refuses(client, auth, limits, caplog):
    limits(rate_limit_read_per_minute=2, rate_limit_read_mode="observe")
    with caplog.at_level(logging.WARNING, logger="tender.rate_limits"):
        responses = [client.get("/v1/invoices", headers=auth) for _ in range(4)]

    assert [r.status_code for r in responses] == [200] * 4
    assert [r.headers["RateLimit-Remaining"] for r in responses] == ["1", "0", "0", "0"]
    assert "Retry-After" not in responses[-1].headers
    assert any("rate limit read exceeded" in record.getMessage() for record in caplog.records)


def test_mode_off_counts_nothing_and_sends_no_headers(client, auth, limits):
    limits(rate_limit_write_mode="off", rate_limit_write_per_minute=1)
    responses = [_create(client, auth) for _ in range(3)]
    assert [r.status_code for r in responses] == [201] * 3
    assert "RateLimit-Limit" not in responses[-1].headers
    assert not list(queues.redis().scan_iter("tender:rl:*"))


def test_counters_live_in_redis_so_every_process_shares_them(client, auth, limits):
    limits(rate_limit_write_per_minute=5)
    _create(client, auth)
    keys = [key.decode() for key in queues.redis().scan_iter("tender:rl:write:*")]
    assert len(keys) == 1 and queues.redis().get(keys[0]) == b"1"
    assert 0 < queues.redis().ttl(keys[0]) <= 65


def test_unreachable_redis_fails_open_and_warns_once_a_minute(client, auth, limits, monkeypatch, caplog,
                                                              unreachable_redis):
    limits(rate_limit_write_per_minute=1)
    monkeypatch.setitem(queues._state, "redis", unreachable_redis)
    monkeypatch.setitem(rate_limits._last_warning, "at", 0.0)
    with caplog.at_level(logging.WARNING, logger="tender.rate_limits"):
        responses = [_create(client, auth) for _ in range(3)]

    assert [r.status_code for r in responses] == [201] * 3
    assert "RateLimit-Limit" not in responses[0].headers
    warnings = [r for r in caplog.records if "failing open" in r.getMessage()]
    assert len(warnings) == 1


def test_unauthenticated_requests_are_refused_before_they_count(client, limits):
    limits(rate_limit_write_per_minute=1)
    for _ in range(3):
        assert client.post("/v1/invoices", json={"amount": "5.00"}).status_code == 401
    assert not list(queues.redis().scan_iter("tender:rl:*"))


def test_public_checkout_is_limited_per_plpub_token_and_each_token_has_its_own_window(client, store, limits):
    limits(rate_limit_public_checkout_per_token=2, rate_limit_public_checkout_per_ip=100)
    link = factories.make_payment_link(store)
    other = factories.make_payment_link(store)
    path = f"/v1/public/payment-links/{link.plpub_id}/checkout"

    statuses = [client.post(path, json={}).status_code for _ in range(3)]
    other_status = client.post(f"/v1/public/payment-links/{other.plpub_id}/checkout", json={}).status_code

    assert statuses == [201, 201, 429]
    assert other_status == 201
    refused = client.post(path, json={})
    assert refused.json["error"]["code"] == "rate_limited" and "Retry-After" in refused.headers


def test_public_checkout_is_also_limited_per_ip_across_tokens(client, store, limits):
    limits(rate_limit_public_checkout_per_token=100, rate_limit_public_checkout_per_ip=2)
    links = [factories.make_payment_link(store) for _ in range(3)]
    statuses = [client.post(f"/v1/public/payment-links/{link.plpub_id}/checkout", json={}).status_code
                for link in links]
    assert statuses == [201, 201, 429]


def test_public_reads_are_limited_per_ip_with_headers(client, store, limits):
    limits(rate_limit_public_reads_per_ip=2)
    link = factories.make_payment_link(store)
    responses = [client.get(f"/v1/public/payment-links/{link.plpub_id}") for _ in range(3)]
    assert [r.status_code for r in responses] == [200, 200, 429]
    assert responses[0].headers["RateLimit-Limit"] == "2"
    assert responses[1].headers["RateLimit-Remaining"] == "0"


@pytest.mark.parametrize("hops, statuses", [(0, [200, 200, 429]), (1, [200, 200, 200])])
def test_trusted_proxy_hops_tell_buyers_behind_a_router_apart(client, store, limits, hops, statuses):
    limits(rate_limit_public_reads_per_ip=2, trusted_proxy_hops=hops)
    link = factories.make_payment_link(store)
    # Three buyers behind one router (the same peer address), each named by X-Forwarded-For.
    responses = [client.get(f"/v1/public/payment-links/{link.plpub_id}", headers={"X-Forwarded-For": buyer})
                 for buyer in ("203.0.113.1", "203.0.113.2", "203.0.113.3")]
    assert [r.status_code for r in responses] == statuses
    spoofed = client.get(f"/v1/public/payment-links/{link.plpub_id}",
                         headers={"X-Forwarded-For": "203.0.113.1, 203.0.113.9"})
    # Only the hops trusted count: a client cannot pick its address by adding entries on the left.
    assert spoofed.status_code == (429 if hops == 0 else 200)


def test_an_ipv6_client_is_its_slash_64(client, store, limits):
    """A machine given a /64 may use any address in it: they are one client, another /64 is another."""
    limits(rate_limit_public_reads_per_ip=2)
    link = factories.make_payment_link(store)

    def read(address):
        return client.get(f"/v1/public/payment-links/{link.plpub_id}", environ_base={"REMOTE_ADDR": address})

    statuses = [read(f"2001:db8:1:2::{n:x}").status_code for n in range(1, 4)]
    assert statuses == [200, 200, 429]
    assert read("2001:db8:1:3::1").status_code == 200


def test_public_mode_off_leaves_buyer_routes_unlimited(client, store, limits):
    limits(rate_limit_public_mode="off", rate_limit_public_reads_per_ip=1)
    link = factories.make_payment_link(store)
    responses = [client.get(f"/v1/public/payment-links/{link.plpub_id}") for _ in range(3)]
    assert [r.status_code for r in responses] == [200] * 3 and "RateLimit-Limit" not in responses[-1].headers


def test_one_client_cannot_spend_a_links_checkout_limit_for_everyone(client, store, limits):
    """Counted per client and token, narrowest first: a client past its own allowance is refused,
    and its refused requests do not count against the link, which other buyers keep reaching."""
    limits(rate_limit_public_checkout_per_client=2, rate_limit_public_checkout_per_token=5,
           rate_limit_public_checkout_per_ip=100, trusted_proxy_hops=1)
    link = factories.make_payment_link(store)
    path = f"/v1/public/payment-links/{link.plpub_id}/checkout"

    def checkout(buyer):
        return client.post(path, json={}, headers={"X-Forwarded-For": buyer})

    stranger = [checkout("198.51.100.66") for _ in range(12)]
    assert [r.status_code for r in stranger] == [201, 201] + [429] * 10
    refused = stranger[-1]
    assert refused.json["error"]["code"] == "rate_limited"
    assert int(refused.headers["Retry-After"]) >= 1 and refused.headers["RateLimit-Limit"] == "2"
    assert "retry in" in refused.json["error"]["message"]
    # Three other buyers still reach the link, up to its own ceiling of 5 a minute.
    buyers = [checkout(f"203.0.113.{n}").status_code for n in (1, 2, 3)]
    assert buyers == [201, 201, 201]
    assert checkout("203.0.113.4").status_code == 429          # the link's ceiling: 2 + 3 = 5
