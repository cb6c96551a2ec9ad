"""The metadata rules of docs/api.md#money-strings-and-sizes: flat, small, and never holding secrets."""
from decimal import Decimal
import math
import re

MAX_KEYS = 50
MAX_KEY_LENGTH = 40
MAX_VALUE_LENGTH = 500
# Found anywhere in the key once its case and separators are folded away, so `cardNumber`,
# `card_number`, `Card-Number` and `card number` all read `cardnumber`.
_SENSITIVE = ("password", "passwd", "passphrase", "secret", "token", "apikey", "privatekey", "mnemonic",
              "seedphrase", "recoveryphrase", "recoverycode", "cardnumber", "securitycode", "cvv", "cvc", "ssn",
              "authorization")
# Too short to look for inside other words (`seedling`, `shipping`): a whole word of the key.
_SENSITIVE_WORDS = ("pwd", "seed", "pin")
# Values that are a whole credential of ours, whatever the key is called.
_SECRET_VALUE = re.compile(r"sk_live_[0-9a-f]{40}|whsec_[0-9a-f]{64}")


def _words(key: str) -> list[str]:
    """`cardNumber` -> card, number; `API-Key` -> api, key; `cvv2` -> cvv."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", key))
    return re.findall(r"[a-z]+", spaced.lower())


def is_sensitive_key(key: str) -> bool:
    words = _words(key)
    folded = "".join(words)
    return any(word in folded for word in _SENSITIVE) or any(word in words for word in _SENSITIVE_WORDS)


def is_secret_value(value) -> bool:
    return isinstance(value, str) and _SECRET_VALUE.search(value) is not None


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
        if not is_sensitive_key(key) and not is_secret_value(item):
            cleaned[key] = item
    return cleaned
