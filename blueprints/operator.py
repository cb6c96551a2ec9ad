"""Operator pages: /metrics (Prometheus text), behind OPERATOR_USERNAME / OPERATOR_PASSWORD.

With no operator credentials configured the pages do not exist (404): nothing is ever exposed
by default.
"""
from functools import wraps
import hmac

import redis as redis_lib
from flask import Blueprint, Response, request

from blueprints.context import settings
from core.errors import NotFound, Unauthorized, Unavailable
from infra import metrics

bp = Blueprint("operator", __name__)


def requires_operator(view):
    @wraps(view)
    def wrapper(*args, **kwargs):
        config = settings()
        if not (config.operator_username and config.operator_password):
            raise NotFound("route_not_found", "No such route.")
        auth = request.authorization
        ok = (auth is not None and auth.type == "basic"
              and hmac.compare_digest((auth.username or "").encode(), config.operator_username.encode())
              & hmac.compare_digest((auth.password or "").encode(), config.operator_password.encode()))
        if not ok:
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
    return Response(text, mimetype="text/plain; version=0.0.4; charset=utf-8")
