"""`Idempotency-Key` on every route that creates or changes something (docs/retries.md): one decorator
in front of the view, one implementation behind it (infra/idempotency.py).

Without the header the view simply runs. With it, the view runs inside the transaction that stores
its response, and a retry of the same request (method, path and body) gets that response again,
with `Idempotent-Replayed: true`."""
from __future__ import annotations

from functools import wraps

from flask import current_app, g, jsonify, request

from blueprints.requests import json_body
from core.client_addresses import client_of
from core.clock import utcnow
from infra import idempotency

HEADER = "Idempotency-Key"


def idempotent(scope=None, *, secret_field: str | None = None, shown_again=None):
    """`scope(**view_kwargs)` -> (store, scope text) for routes without an API key (the buyer's);
    merchant routes keep a key per API key, so a response is replayed only to the key that was
    given it, never to another key of the store (which may not be allowed to make that request). `secret_field`/`shown_again(store, body, digest)`: a
    field never stored (only its digest), shown again on a replay from where it is kept."""
    def decorator(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            key = request.headers.get(HEADER)
            if key is None:
                return view(*args, **kwargs)
            key = idempotency.check_key(key)
            store, key_scope = scope(**kwargs) if scope else (g.store, api_key_scope(g.api_key))
            request_fingerprint = idempotency.fingerprint(f"{request.method} {request.path}", json_body())
            now = utcnow()
            first = {}

            def work():
                first["response"] = response = current_app.make_response(view(*args, **kwargs))
                return response.status_code, response.get_json()

            outcome = idempotency.run(
                store, key, request_fingerprint, work, now=now, scope=key_scope, secret_field=secret_field,
                shown_again=(lambda body, digest: shown_again(store, body, digest)) if shown_again else None)
            if not outcome.replayed:
                return first["response"]
            response = jsonify(outcome.body)
            response.status_code = outcome.status
            response.headers["Idempotent-Replayed"] = "true"
            return response
        wrapper.idempotent = True           # read by apidoc/: the route documents the header
        return wrapper
    return decorator


def api_key_scope(api_key) -> str:
    """The scope a merchant route keeps its keys in: the API key's own."""
    return f"key {api_key.id}"


def per_buyer(label: str, find):
    """The scope of a buyer's route (no API key): a key is kept per object, which `find` loads from
    the route's one argument, and per client, so two buyers never share a key."""
    def scope(**route_args):
        (object_id,) = route_args.values()
        found = find(object_id)
        return found.store, f"{label} {found.public_id} {client_address()}"
    return scope


def client_address() -> str:
    """The buyer, as the per-client rate limits see it (an IPv4 address, an IPv6 /64)."""
    return client_of(request.remote_addr)
