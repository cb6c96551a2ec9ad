"""The webhook signature (docs/webhooks.md): `v1=` + hex HMAC-SHA256(secret, "{timestamp}.{raw body}").

The key is the secret string's UTF-8 bytes exactly as shown to the merchant (`whsec_…`, or the
hex text of a store's callback secret). Signing the timestamp with the body makes a captured
delivery useless for replay once receivers refuse timestamps more than 300 seconds off."""
from __future__ import annotations

import hashlib
import hmac

TOLERANCE_SECONDS = 300


def signature(secret: str, timestamp: int, body: bytes) -> str:
    message = str(int(timestamp)).encode("ascii") + b"." + body
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def signature_header(secrets: list[str], timestamp: int, body: bytes) -> str:
    """One `v1=` value per live secret: two during the 24 hours after a rotation."""
    return ",".join(f"v1={signature(secret, timestamp, body)}" for secret in secrets)


def verify(secret: str, header: str, timestamp: int, body: bytes, *, now: int) -> bool:
    """What a receiver does (and what the docs show): any v1 value matches, timestamp is fresh."""
    if abs(now - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    expected = signature(secret, timestamp, body)
    values = [part.strip()[3:] for part in header.split(",") if part.strip().startswith("v1=")]
    return any(hmac.compare_digest(expected, value) for value in values)
