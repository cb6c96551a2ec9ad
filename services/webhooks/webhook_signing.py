"""The webhook signatures (docs/webhooks.md#verifying-the-signature).

Ours, `X-Tender-Signature`: `v1=` + hex HMAC-SHA256(secret, "{timestamp}.{raw body}"), keyed with
the secret string's UTF-8 bytes exactly as shown to the merchant (`whsec_…`, or the hex text of an
installation's or a store's callback secret).

Standard Webhooks, `webhook-signature`: `v1,` + base64 HMAC-SHA256(key, "{id}.{timestamp}.{raw
body}"), where the key is derived as that specification derives it from a `whsec_` secret: the
part after `whsec_` (the whole secret when it has no prefix), base64-decoded. Our secrets are 64
hex characters, all of them base64 characters, so the maintained libraries (`standardwebhooks`
for Python and JavaScript, its PHP port), given the secret exactly as shown, derive the same
48-byte key and verify our deliveries.

Signing the timestamp with the body makes a captured delivery useless for replay once receivers
refuse timestamps more than 300 seconds off."""
from __future__ import annotations

import base64
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


STANDARD_PREFIX = "whsec_"


def standard_key(secret: str) -> bytes:
    """The Standard Webhooks key of a secret: what follows `whsec_`, base64-decoded."""
    encoded = secret[len(STANDARD_PREFIX):] if secret.startswith(STANDARD_PREFIX) else secret
    return base64.b64decode(encoded + "=" * (-len(encoded) % 4))


def standard_signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    message = f"{message_id}.{int(timestamp)}.".encode("utf-8") + body
    digest = hmac.new(standard_key(secret), message, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def standard_signature_header(secrets: list[str], message_id: str, timestamp: int, body: bytes) -> str:
    """One `v1,` value per live secret, space-separated: two during the 24 hours after a rotation."""
    return " ".join(standard_signature(secret, message_id, timestamp, body) for secret in secrets)
