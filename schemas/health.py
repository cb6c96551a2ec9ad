"""The /health report (documentation shape: infra/health.py builds the dict)."""
from marshmallow import Schema, fields, validate


class HealthComponentsSchema(Schema):
    database = fields.String(validate=validate.OneOf(("ok", "unavailable")))
    redis = fields.String(validate=validate.OneOf(("ok", "unavailable")))
    # `degraded`: the swap provider refused our credentials lately; `unavailable`: it did not answer
    # lately (buyers get 503); `unknown` while Redis is down.
    provider = fields.String(validate=validate.OneOf(("ok", "degraded", "unavailable", "unknown")))
    # `degraded`: a supported currency has no usable exchange rate now (docs/currencies.md); `unknown`
    # while the database is down.
    exchange_rates = fields.String(validate=validate.OneOf(("ok", "degraded", "unknown")))


class HealthSchema(Schema):
    status = fields.String(validate=validate.OneOf(("ok", "degraded")))
    components = fields.Nested(HealthComponentsSchema)
