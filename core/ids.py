"""Public identifiers: an opaque prefix plus 32 lowercase hex characters (128 bits)."""
import re
import secrets
import uuid

# The API's pattern for path and cursor ids (plpub_ tokens have their own rule).
_ID_PATTERN = re.compile(r"^(inv_|txn_|plink_|wh_|whd_|evt_|int_|ref_)[0-9a-z]{20,32}$")
_PLPUB_PATTERN = re.compile(r"^plpub_([0-9a-z]{12}|[0-9a-z]{32})$")


def new_public_id(prefix: str) -> str:
    return prefix + secrets.token_hex(16)


def new_uuid() -> uuid.UUID:
    return uuid.uuid4()


def is_public_id(value, prefix: str) -> bool:
    """True when `value` is a well-formed id of the resource whose prefix is `prefix`."""
    if not isinstance(value, str) or not value.startswith(prefix):
        return False
    if prefix == "plpub_":
        return bool(_PLPUB_PATTERN.match(value))
    return bool(_ID_PATTERN.match(value))


def parse_uuid(value) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except (ValueError, AttributeError, TypeError):
        return None
