"""Operator pages: /metrics (Prometheus text), behind OPERATOR_USERNAME / OPERATOR_PASSWORD, with a
per-client limit on wrong credentials (infra/operator_auth.py).

With no operator credentials configured the pages do not exist (404): nothing is ever exposed
by default.
"""
from functools import wraps

import redis as redis_lib
from flask import Blueprint, Response, request

from blueprints.context import settings
from core.errors import NotFound, TooManyRequests, Unauthorized, Unavailable
from infra import metrics, operator_auth

bp = Blueprint("operator", __name__)


def requires_operator(view):
    @wraps(view)
    def wrapper(*args, **kwargs):
        config = settings()
        if not (config.operator_username and config.operator_password):
            raise NotFound("route_not_found", "No such route.")
        verdict = operator_auth.verify(request.authorization, client=request.remote_addr or "unknown",
                                       expected_username=config.operator_username,
                                       expected_password=config.operator_password)
        if verdict.retry_after:
            refused = TooManyRequests("rate_limited", "Too many wrong operator credentials from this client; "
                                                      f"retry in {verdict.retry_after} seconds.")
            refused.headers = {"Retry-After": str(verdict.retry_after)}
            raise refused
        if not verdict.allowed:
            raise OperatorAuthRequired()
        return view(*args, **kwargs)
    return wrapper


class OperatorAuthRequired(Unauthorized):
    def __init__(self):
        super().__init__("invalid_operator_credentials", "Operator pages need the operator's user name and password.")
        self.headers = {"WWW-Authenticate": 'Basic realm="Tender operator", charset="UTF-8"'}


@bp.get("/metrics")
@requires_operator
def get_metrics():
    try:
        text = metrics.render(metrics.queue_depths())
    except (redis_lib.RedisError, OSError):
        raise Unavailable("service_unavailable", "Metrics live in Redis, which is unreachable.") from None
    # content_type, not mimetype: werkzeug appends a charset to a text/ mimetype, a second one here.
    return Response(text, content_type="text/plain; version=0.0.4; charset=utf-8")
