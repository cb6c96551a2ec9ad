"""Time in one convention: naive datetimes in UTC, everywhere below the HTTP layer."""
import datetime as dt


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def to_naive_utc(value: dt.datetime) -> dt.datetime:
    if value.tzinfo is None:
        return value
    return value.astimezone(dt.timezone.utc).replace(tzinfo=None)


def isoformat(value: dt.datetime | None) -> str | None:
    """UTC ISO 8601 with `Z`, second precision: the one format every response uses."""
    if value is None:
        return None
    # isoformat, not strftime: the same text, several times faster (exports write millions).
    return to_naive_utc(value).isoformat(timespec="seconds") + "Z"
