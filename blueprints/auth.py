"""Bearer-key authentication and scope checks for merchant routes."""
from __future__ import annotations

from functools import wraps

from flask import g, request

from blueprints.rate_limits import limit_api_key
from core.clock import utcnow
from core.errors import Forbidden, Unauthorized
from services.accounts import api_keys


def authenticate_request(*, connect_retry: bool = False):
    header = request.headers.get("Authorization", "")
    if not header.strip():
        raise Unauthorized("missing_api_key", "Send your API key as 'Authorization: Bearer sk_live_…'.")
    scheme, _, token = header.strip().partition(" ")
    key = (api_keys.authenticate(token.strip(), now=utcnow(), connect_retry=connect_retry)
           if scheme.lower() == "bearer" else None)
    if key is None:
        raise Unauthorized("invalid_api_key", "The API key is unknown, revoked or expired.")
    g.api_key, g.store = key, key.store
    limit_api_key(key)
    return key


def requires_scope(*scopes, first=None, connect_retry=False):
    """Authenticate, run `first(key)` (a rule that outranks scopes), then require any of `scopes`.
    `connect_retry`: also accept a bootstrap key spent moments ago (the connect route's retry)."""
    def decorator(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            key = authenticate_request(connect_retry=connect_retry)
            if first is not None:
                first(key)
            if not api_keys.granted_scopes(key) & set(scopes):
                raise Forbidden("INSUFFICIENT_SCOPE", api_keys.refused_scope_message(key, scopes[0]),
                                  details={"required_scopes": list(scopes)})
            return view(*args, **kwargs)
        wrapper.required_scopes = scopes        # read by apidoc/: the route's security and 401/403
        return wrapper
    return decorator
