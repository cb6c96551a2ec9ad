"""What each dashboard role may do (docs/dashboard.md#roles): one table, read by every page."""
from __future__ import annotations

from models.people import ROLES

# read: every page but the audit log; operate: invoices, refunds, payment links, settings, the
# sandbox; develop: API keys and webhooks; team: members; payout: the payout wallet and TOTP rule;
# audit: the audit log.
RIGHTS = {
    "owner": frozenset({"read", "operate", "develop", "team", "payout", "audit"}),
    "admin": frozenset({"read", "operate", "develop"}),
    "developer": frozenset({"read", "develop"}),
    "viewer": frozenset({"read"}),
}
assert set(RIGHTS) == set(ROLES)


def may(role: str | None, right: str) -> bool:
    return right in RIGHTS.get(role or "", frozenset())
