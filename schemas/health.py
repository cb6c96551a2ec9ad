"""The /health report (documentation shape: infra/health.py builds the dict)."""
from marshmallow import Schema, fields, validate


class HealthComponentsSchema(Schema):
    database = fields.String(validate=validate.OneOf(("ok", "unavailable")))
    redis = fields.String(validate=validate.OneOf(("ok", "unavailable")))
    # `degraded`: the swap provider refused our credentials lately; `unknown` while Redis is down.
    provider = fields.String(validate=validate.OneOf(("ok", "degraded", "unknown")))


class HealthSchema(Schema):
    status = fields.String(validate=validate.OneOf(("ok", "degraded")))
    components = fields.Nested(HealthComponentsSchema)
