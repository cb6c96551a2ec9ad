"""The metadata rules of docs/api.md#money-strings-and-sizes: flat, small, and never holding secrets."""
from decimal import Decimal
import math
import re

MAX_KEYS = 50
MAX_KEY_LENGTH = 40
MAX_VALUE_LENGTH = 500
_SENSITIVE = ("password", "passwd", "secret", "token", "api_key", "apikey", "private_key",
              "mnemonic", "seed_phrase", "card_number", "cvv", "cvc", "ssn", "authorization")


def is_sensitive_key(key: str) -> bool:
    normalized = re.sub(r"[- ]", "_", key.lower())
    return any(word in normalized for word in _SENSITIVE)


def clean_metadata(value) -> dict:
    """Validate a metadata object and drop its sensitive keys; ValueError says what is wrong."""
    if not isinstance(value, dict):
        raise ValueError("must be a JSON object")
    if len(value) > MAX_KEYS:
        raise ValueError(f"must have at most {MAX_KEYS} keys")
    cleaned = {}
    for key, item in value.items():
        if len(key) > MAX_KEY_LENGTH:
            raise ValueError(f"keys must be at most {MAX_KEY_LENGTH} characters")
        if isinstance(item, (dict, list)):
            raise ValueError("must be flat: values are strings, numbers, booleans or null")
        if isinstance(item, str) and len(item) > MAX_VALUE_LENGTH:
            raise ValueError(f"string values must be at most {MAX_VALUE_LENGTH} characters")
        if isinstance(item, Decimal):
            # Request bodies parse decimals as Decimal (for amounts); metadata is stored and sent
            # as plain JSON, where a fractional number is a float. 1e400 has no JSON float: refuse.
            item = float(item)
            if not math.isfinite(item):
                raise ValueError("numbers must be finite")
        if not is_sensitive_key(key):
            cleaned[key] = item
    return cleaned
