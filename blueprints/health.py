from flask import Blueprint, jsonify

from infra import health

bp = Blueprint("health", __name__)


@bp.get("/health")
def get_health():
    report = health.check()
    return jsonify(report), 200 if report["components"]["database"] == "ok" else 503
