"""Which bucket a request counts against, and the RateLimit-* headers on limited routes.

Keyed routes count per API key (`write` for POST/PATCH/DELETE, `read` for GET); public routes
count per client (an IPv4 address, or an IPv6 /64: core/client_addresses.py), and public checkout
also per client and `plpub_` token, under a higher
ceiling per token: one client spending its allowance on a link leaves it open to every other
buyer (docs/api.md#rate-limits).
"""
from __future__ import annotations

from flask import g, request

from blueprints.context import settings
from core.client_addresses import client_of
from core.errors import TooManyRequests
from infra import rate_limits
from infra.rate_limits import Bucket

PUBLIC_PREFIX = "/v1/public/"


def _buckets():
    config = settings()
    return {
        "write": Bucket("write", config.rate_limit_write_per_minute, config.rate_limit_write_mode),
        "read": Bucket("read", config.rate_limit_read_per_minute, config.rate_limit_read_mode),
        "public_checkout_client": Bucket("public_checkout_client", config.rate_limit_public_checkout_per_client,
                                         config.rate_limit_public_mode),
        "public_checkout_token": Bucket("public_checkout_token", config.rate_limit_public_checkout_per_token,
                                        config.rate_limit_public_mode),
        "public_checkout_ip": Bucket("public_checkout_ip", config.rate_limit_public_checkout_per_ip,
                                     config.rate_limit_public_mode),
        "public_read_ip": Bucket("public_read_ip", config.rate_limit_public_reads_per_ip,
                                 config.rate_limit_public_mode),
    }


def _apply(hits) -> None:
    """Count the request in each (bucket, subject) in turn, narrowest first, and stop at the first
    refusal: a request refused for its client is not counted against the link everyone shares."""
    decisions = []
    for bucket, subject in hits:
        decisions.append(rate_limits.hit(bucket, subject))
        if decisions[-1] is not None and decisions[-1].refused:
            break
    decision = rate_limits.tightest(decisions)
    g.rate_limit = decision
    if decision is not None and decision.refused:
        raise TooManyRequests("rate_limited", f"Too many requests; retry in {decision.reset_seconds} seconds.")


def limit_api_key(key) -> None:
    """Count a keyed request; called once the key is known (blueprints/auth.py)."""
    bucket = _buckets()["read" if request.method in ("GET", "HEAD") else "write"]
    _apply([(bucket, key.id)])


def limit_public_request() -> None:
    """before_request: count unauthenticated buyer routes per IP (and checkout per token)."""
    if not request.path.startswith(PUBLIC_PREFIX) or request.url_rule is None:
        return
    buckets, ip = _buckets(), client_of(request.remote_addr)
    if request.method in ("GET", "HEAD"):
        hits = [(buckets["public_read_ip"], ip)]
    else:
        hits = [(buckets["public_checkout_ip"], ip)]     # then, on checkout, client and link, link
        # The buyer token is whichever path argument is a plpub_ token, whatever the route calls it.
        token = next((value for value in (request.view_args or {}).values()
                      if isinstance(value, str) and value.startswith("plpub_")), None)
        if token and request.url_rule.rule.endswith("/checkout"):
            hits.append((buckets["public_checkout_client"], f"{ip} {token}"))
            hits.append((buckets["public_checkout_token"], token))
    _apply(hits)


def limit_page_request() -> None:
    """The hosted buyer pages (blueprints/pages.py) count as public reads of the client's IP."""
    _apply([(_buckets()["public_read_ip"], client_of(request.remote_addr))])


def stamp_headers(response):
    """after_request: RateLimit-* on every limited response, Retry-After on a refusal."""
    decision = g.get("rate_limit")
    if decision is not None:
        response.headers["RateLimit-Limit"] = str(decision.bucket.limit)
        response.headers["RateLimit-Remaining"] = str(decision.remaining)
        response.headers["RateLimit-Reset"] = str(decision.reset_seconds)
        if decision.refused:
            response.headers["Retry-After"] = str(decision.reset_seconds)
    return response
