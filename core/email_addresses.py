"""What Tender accepts as an e-mail address (docs/email.md): a plain `local@domain`, ASCII, at most
254 characters, no display name, no comment, nothing a header could be split on. Deliberately
narrower than RFC 5322: an address that passes here is one every SMTP server takes in `RCPT TO`."""
from __future__ import annotations

import re

MAX_LENGTH = 254
_ADDRESS = re.compile(
    r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"     # dot-atom local part
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}", re.ASCII)


def address_problem(value) -> str | None:
    """Why `value` is not an address Tender sends to, or None when it is."""
    if not isinstance(value, str):
        return "must be an e-mail address (a string)"
    if len(value) > MAX_LENGTH:
        return f"must be an e-mail address of at most {MAX_LENGTH} characters"
    if not _ADDRESS.fullmatch(value) or len(value.split("@")[0]) > 64:
        return "must be an e-mail address like name@example.com"
    return None


def normalized(value: str) -> str:
    """The form kept and compared: the domain lower-cased (the local part is the server's to read)."""
    local, domain = value.rsplit("@", 1)
    return f"{local}@{domain.lower()}"
