"""Field types the API shares: amounts as strings, UTC timestamps, public ids."""
from collections.abc import Mapping
import datetime as dt
from decimal import Decimal

from marshmallow import Schema, ValidationError, fields

from core import clock, currencies, email_addresses, ids, money, urls
from core.metadata import clean_metadata


class AmountString(fields.Field):
    """A positive decimal *string* (JSON numbers are refused); loads to Decimal. `signed`: a response
    amount that may be negative (a difference).

    A fiat amount has its currency's minor units (core/money.py): `currency` names the sibling field
    (or the object's attribute) that holds it. A request without it is read with the currency field's
    default; one whose currency is elsewhere (a refund's invoice) is checked by its service."""

    def __init__(self, *, fiat: bool = True, signed: bool = False, currency: str = "currency", **kwargs):
        super().__init__(**kwargs)
        self.fiat = fiat
        self.signed = signed
        self.currency = currency

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, str):
            raise ValidationError("must be a decimal string such as \"10.00\", not a number")
        try:
            return money.parse_fiat(value, self._request_currency(data)) if self.fiat else money.parse_crypto(value)
        except ValueError as error:
            raise ValidationError(str(error)) from None

    def _request_currency(self, data) -> str | None:
        if isinstance(data, Mapping) and self.currency in data:
            given = data[self.currency]
            return given if isinstance(given, str) else None     # not a code: the currency field says so
        sibling = self.parent.fields.get(self.currency) if self.parent else None
        default = getattr(sibling, "load_default", None)
        return default if isinstance(default, str) else None

    def _serialize(self, value, attr, obj, **kwargs):
        if value is None:
            return None
        if not self.fiat:
            return money.format_crypto(value)
        currency = obj.get(self.currency) if isinstance(obj, Mapping) else getattr(obj, self.currency, None)
        return money.format_fiat(value, currency)


class CurrencyCode(fields.String):
    """An ISO 4217 currency code (core/currencies.py), upper-case; whether it is enabled is the
    service's question (SUPPORTED_CURRENCIES)."""

    def _deserialize(self, value, attr, data, **kwargs):
        code = super()._deserialize(value, attr, data, **kwargs)
        if not currencies.is_currency(code):
            raise ValidationError("must be an upper-case ISO 4217 currency code such as USD")
        return code


def one_of(values, **kwargs) -> fields.String:
    """A response string from a closed set the models define, documented as that enum (so the
    document cannot drift from what the code stores)."""
    metadata = {"enum": list(values), **kwargs.pop("metadata", {})}
    return fields.String(metadata=metadata, **kwargs)


class StrictBoolean(fields.Boolean):
    """JSON true or false only: "yes", 1 or "true" are refused rather than guessed at."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise ValidationError("must be true or false")
        return value


class StrictString(fields.String):
    """A string that refuses empty text and control characters."""

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        if any(ord(char) < 32 for char in text):
            raise ValidationError("must not contain control characters")
        return text


class EmailAddress(fields.String):
    """An e-mail address Tender sends to (core/email_addresses.py): `name@example.com`, nothing else."""

    def _deserialize(self, value, attr, data, **kwargs):
        problem = email_addresses.address_problem(value)
        if problem:
            raise ValidationError(problem)
        return email_addresses.normalized(value)


class UtcDateTime(fields.Field):
    """ISO 8601 in, naive UTC inside, `YYYY-MM-DDTHH:MM:SSZ` out."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, str) or len(value) > 40:
            raise ValidationError("must be an ISO 8601 date-time such as 2026-01-31T12:00:00Z")
        try:
            parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
            return clock.to_naive_utc(parsed)
        except (ValueError, OverflowError):   # OverflowError: an offset pushes it past year 1 or 9999
            raise ValidationError("must be an ISO 8601 date-time such as 2026-01-31T12:00:00Z") from None

    def _serialize(self, value, attr, obj, **kwargs):
        return clock.isoformat(value)


class PublicId(fields.String):
    """A public id with the given prefix (`inv_…`); anything else is a validation error."""

    def __init__(self, prefix: str, **kwargs):
        super().__init__(**kwargs)
        self.prefix = prefix

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        if not ids.is_public_id(text, self.prefix):
            raise ValidationError(f"must be an id starting with {self.prefix}")
        return text


class UuidString(fields.String):
    def _deserialize(self, value, attr, data, **kwargs):
        parsed = ids.parse_uuid(super()._deserialize(value, attr, data, **kwargs))
        if parsed is None:
            raise ValidationError("must be a UUID")
        return parsed

    def _serialize(self, value, attr, obj, **kwargs):
        return None if value is None else str(value)


class Metadata(fields.Field):
    """The flat metadata object of docs/api.md#money-strings-and-sizes, with sensitive keys dropped."""

    def _deserialize(self, value, attr, data, **kwargs):
        try:
            return clean_metadata(value)
        except ValueError as error:
            raise ValidationError(str(error)) from None


class HttpUrl(StrictString):
    """An absolute http(s) URL of at most 2048 characters whose host is a real one
    (core/urls.py: address_problem); `https_only` for server targets."""

    def __init__(self, *, https_only: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.https_only = https_only

    def _deserialize(self, value, attr, data, **kwargs):
        from urllib.parse import urlsplit

        text = super()._deserialize(value, attr, data, **kwargs)
        schemes = ("https",) if self.https_only else ("http", "https")
        try:
            parts = urlsplit(text) if len(text) <= 2048 else None
        except ValueError:          # an unclosed [ of an IPv6 host
            parts = None
        if parts is None or parts.scheme not in schemes or not parts.hostname or " " in text:
            kind = "an https:// URL" if self.https_only else "an http:// or https:// URL"
            raise ValidationError(f"must be {kind} of at most 2048 characters")
        problem = urls.address_problem(text)
        if problem:
            raise ValidationError(problem)
        return text


def decimal_or_none(value) -> Decimal | None:
    return None if value is None else Decimal(value)


class RateString(fields.Field):
    """An exchange rate as a decimal string with at least four significant digits (response only)."""

    def _serialize(self, value, attr, obj, **kwargs):
        return money.format_rate(value)


class FixedRateSchema(Schema):
    """`exchange_rate` of an invoice once its buyer committed: 1 `from` = `rate` `to`. Read from the
    invoice's columns (`FixedRate` below hands it the invoice)."""

    from_ = fields.String(data_key="from", attribute="currency",
                          metadata={"description": "The invoice currency."})
    to = fields.Function(lambda invoice: currencies.asset_currency(invoice.output_asset) or "USD",
                         metadata={"type": "string", "description": "The currency of the payout asset."})
    rate = RateString(attribute="exchange_rate", metadata={"type": "string", "example": "1.0842"})
    source = fields.String(attribute="exchange_rate_source", metadata={"description": "The rate source."})
    fixed_at = UtcDateTime(attribute="exchange_rate_fixed_at", metadata={"description": "When the commit fixed it."})


class FixedRate(fields.Nested):
    """The invoice's fixed rate as an object, or null (at par, or before the commit)."""

    def __init__(self, **kwargs):
        super().__init__(FixedRateSchema, allow_none=True, **kwargs)

    def get_value(self, obj, attr, accessor=None, default=None):
        return obj if getattr(obj, "exchange_rate", None) is not None else None
