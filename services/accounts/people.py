"""Dashboard users (docs/dashboard.md): passwords (argon2id), TOTP, memberships, and the
single-use links that let people in: invitations (72 h) and password resets (1 h). A link's token
is shown once; only its SHA-256 digest is stored, and using it is one compare-and-set."""
from __future__ import annotations

import datetime as dt
import hashlib
import secrets

import pyotp
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from core import email_addresses, ids
from core.clock import isoformat
from core.errors import BadRequest, Forbidden
from infra.locks import lock_row
from models.base import db
from models.people import ROLES, Invitation, Membership, PasswordReset, User
from models.stores import Store
from services.accounts import roles
from services.mail import mail_outbox

INVITATION_LIFETIME = dt.timedelta(hours=72)
RESET_LIFETIME = dt.timedelta(hours=1)
PASSWORD_MIN, PASSWORD_MAX = 10, 128
_hasher = PasswordHasher()          # argon2id, the library's RFC 9106 defaults
# Verifying an unknown e-mail costs what a known one does, so timing does not tell them apart.
_DUMMY_HASH = _hasher.hash(secrets.token_hex(16))


class NoSuchMember(LookupError):
    """Not a member of this store (a 404 page on the dashboard)."""


class LinkRefused(Exception):
    """An invitation or reset link that is unknown, used or expired: one answer for all three."""


def normal_email(email) -> str:
    """The address as stored (the mail outbox's rule), lower-cased: one account per address."""
    email = (email or "").strip() if isinstance(email, str) else ""
    problem = email_addresses.address_problem(email)
    if problem:
        raise BadRequest("validation_error", f"email: {problem}", param="email")
    return email_addresses.normalized(email).lower()


def check_password_rule(password) -> str:
    if not isinstance(password, str) or not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise BadRequest("validation_error", f"password: must be {PASSWORD_MIN} to {PASSWORD_MAX} characters",
                         param="password")
    return password


def _digest(token: str) -> str:
    return hashlib.sha256((token or "").encode()).hexdigest()


def find_by_email(email: str) -> User | None:
    try:
        return User.get_or_none(User.email == normal_email(email))
    except BadRequest:
        return None


def verify_password(user: User | None, password: str) -> bool:
    try:
        return _hasher.verify(user.password_hash if user and user.password_hash else _DUMMY_HASH, password or "") \
            and user is not None and user.password_hash is not None
    except (VerificationError, InvalidHashError):
        return False


def verify_totp(user: User, code: str) -> bool:
    """True when the user has no TOTP, or `code` is the current one (one step of clock drift allowed)."""
    if not user.totp_secret:
        return True
    return pyotp.TOTP(user.totp_secret).verify((code or "").replace(" ", ""), valid_window=1)


def new_totp_secret() -> str:
    return pyotp.random_base32()


def totp_uri(user: User, secret: str) -> str:
    return pyotp.TOTP(secret).provisioning_uri(name=user.email, issuer_name="Tender")


def enable_totp(user: User, secret: str, code: str, *, now: dt.datetime) -> None:
    if not pyotp.TOTP(secret).verify((code or "").replace(" ", ""), valid_window=1):
        raise BadRequest("validation_error", "code: that is not the code your app shows", param="code")
    User.update(totp_secret=secret, updated_at=now).where(User.id == user.id).execute()


def set_password(user: User, password: str, *, now: dt.datetime) -> User:
    """A new password ends every session the user has (the epoch moves); the caller starts a new one."""
    User.update(password_hash=_hasher.hash(check_password_rule(password)), updated_at=now,
                session_epoch=User.session_epoch + 1).where(User.id == user.id).execute()
    return User.get_by_id(user.id)


def end_other_sessions(user: User, *, now: dt.datetime) -> User:
    User.update(session_epoch=User.session_epoch + 1, updated_at=now).where(User.id == user.id).execute()
    return User.get_by_id(user.id)


# --- memberships -----------------------------------------------------------------------------

def role_in(user: User, store_id) -> str | None:
    parsed = ids.parse_uuid(store_id)
    if parsed is None:
        return None
    membership = Membership.get_or_none((Membership.user == user.id) & (Membership.store == parsed))
    return membership.role if membership else None


def membership_in(user: User, store_id) -> tuple[Store, str] | None:
    """(the store, the user's role in it), or None: one query, read on every dashboard request."""
    parsed = ids.parse_uuid(store_id)
    if parsed is None:
        return None
    row = (Membership.select(Membership, Store).join(Store)
           .where((Membership.user == user.id) & (Membership.store == parsed)).first())
    return (row.store, row.role) if row else None


def stores_of(user: User) -> list[tuple[Store, str]]:
    rows = (Membership.select(Membership, Store).join(Store).where(Membership.user == user.id)
            .order_by(Store.name, Store.id))
    return [(row.store, row.role) for row in rows]


def team_of(store: Store) -> list[Membership]:
    return list(Membership.select(Membership, User).join(User).where(Membership.store == store.id)
                .order_by(User.email))


def remove_member(store: Store, user_id, *, by: User, now: dt.datetime) -> User:
    """Remove a member; the removed user's sessions end."""
    with db.atomic():
        member = _changeable_membership(store, user_id, by=by, leaves_owners=True)
        member.delete_instance()
    return end_other_sessions(member.user, now=now)


def change_role(store: Store, user_id, role: str, *, by: User) -> tuple[Membership, str]:
    """Give a member another role, in place; returns the membership and the role it had. It is read
    on the member's next request: their sessions go on, with the new role's rights."""
    if role not in ROLES:
        raise BadRequest("validation_error", f"role: one of {', '.join(ROLES)}", param="role")
    with db.atomic():
        member = _changeable_membership(store, user_id, by=by, leaves_owners=role != "owner")
        before = member.role
        Membership.update(role=role).where(Membership.id == member.id).execute()
    member.role = role
    return member, before


def _changeable_membership(store: Store, user_id, *, by: User, leaves_owners: bool) -> Membership:
    """The membership a removal or role change may touch, under the store's row lock (so two owners
    demoting each other at once cannot leave none): never the acting user's own, which could lock
    them out, and never the last owner's when the change takes the owner role away."""
    lock_row(Store, store.id)
    if not roles.may(role_in(by, store.id), "team"):          # read again under the lock: a demoted owner's late request
        raise Forbidden("INSUFFICIENT_SCOPE", "Only an owner of the store changes its team.")
    member = Membership.get_or_none((Membership.store == store.id) & (Membership.user == ids.parse_uuid(user_id)))
    if member is None:
        raise NoSuchMember()
    if member.user_id == by.id:
        raise BadRequest("validation_error", "You cannot change your own role or remove yourself: "
                         "another owner can.", param="user")
    owners = Membership.select().where((Membership.store == store.id) & (Membership.role == "owner")).count()
    if leaves_owners and member.role == "owner" and owners <= 1:
        raise BadRequest("validation_error", "A store keeps at least one owner.", param="user")
    return member


# --- invitations -----------------------------------------------------------------------------

def invite(store: Store, email: str, role: str, *, now: dt.datetime, invited_by: User | None = None,
           base_url: str | None = None) -> str:
    """An invitation; returns its token (shown once, in the link). Given `base_url`, the link is
    also mailed, in the same transaction (the mail outbox)."""
    if role not in ROLES:
        raise BadRequest("validation_error", f"role: one of {', '.join(ROLES)}", param="role")
    token = secrets.token_urlsafe(32)
    with db.atomic():
        invitation = Invitation.create(
            id=ids.new_uuid(), store=store.id, email=normal_email(email), role=role, token_digest=_digest(token),
            invited_by=invited_by.id if invited_by else None, expires_at=now + INVITATION_LIFETIME, created_at=now)
        if base_url:
            mail_outbox.queue_mail("invitation", invitation.email, {
                "store_name": store.name, "role": role, "url": invitation_url(base_url, token),
                "expires_at": isoformat(invitation.expires_at)}, dedupe_key=f"invitation:{invitation.id}",
                now=now, store_id=store.id)
    return token


def invitation_url(base_url: str, token: str) -> str:
    return f"{base_url}/dashboard/invitations/{token}"


def reset_url(base_url: str, token: str) -> str:
    return f"{base_url}/dashboard/password-reset/{token}"


def open_invitation(token: str, *, now: dt.datetime) -> Invitation:
    invitation = Invitation.get_or_none(Invitation.token_digest == _digest(token))
    if invitation is None or invitation.accepted_at is not None or invitation.expires_at <= now:
        raise LinkRefused()
    return invitation


def accept_invitation(token: str, *, password: str, now: dt.datetime) -> tuple[User, Invitation]:
    """Spend the invitation (once, whoever races) and make its e-mail a member with its role. A new
    user sets `password`; an existing one proves it with `password`."""
    with db.atomic():
        invitation = open_invitation(token, now=now)
        user = User.get_or_none(User.email == invitation.email)
        if user is not None and user.password_hash and not verify_password(user, password):
            raise BadRequest("validation_error", "password: not this account's password", param="password")
        spent = (Invitation.update(accepted_at=now)
                 .where((Invitation.id == invitation.id) & Invitation.accepted_at.is_null()
                        & (Invitation.expires_at > now)).execute())
        if spent != 1:
            raise LinkRefused()
        if user is None:
            user = User.create(id=ids.new_uuid(), email=invitation.email, created_at=now, updated_at=now)
        if not user.password_hash:
            user = set_password(user, password, now=now)
        member = Membership.get_or_none((Membership.user == user.id) & (Membership.store == invitation.store_id))
        if member is None:
            Membership.create(user=user.id, store=invitation.store_id, role=invitation.role, created_at=now)
        else:
            Membership.update(role=invitation.role).where(Membership.id == member.id).execute()
    return user, invitation


# --- password resets -------------------------------------------------------------------------

def start_reset(email: str, *, now: dt.datetime, base_url: str | None = None) -> tuple[User, str] | None:
    """A reset link's token for a known user, mailed to them given `base_url`; None for an unknown
    address (the page answers the same either way)."""
    user = find_by_email(email)
    if user is None or not user.password_hash:
        return None
    token = secrets.token_urlsafe(32)
    with db.atomic():
        reset = PasswordReset.create(id=ids.new_uuid(), user=user.id, token_digest=_digest(token),
                                     expires_at=now + RESET_LIFETIME, created_at=now)
        if base_url:
            mail_outbox.queue_mail("password_reset", user.email, {"store_name": "Tender",
                "url": reset_url(base_url, token), "expires_at": isoformat(reset.expires_at)},
                dedupe_key=f"password_reset:{reset.id}", now=now)
    return user, token


def open_reset(token: str, *, now: dt.datetime) -> PasswordReset:
    reset = PasswordReset.get_or_none(PasswordReset.token_digest == _digest(token))
    if reset is None or reset.used_at is not None or reset.expires_at <= now:
        raise LinkRefused()
    return reset


def finish_reset(token: str, password: str, *, now: dt.datetime) -> User:
    check_password_rule(password)
    with db.atomic():
        reset = open_reset(token, now=now)
        spent = (PasswordReset.update(used_at=now)
                 .where((PasswordReset.id == reset.id) & PasswordReset.used_at.is_null()).execute())
        if spent != 1:
            raise LinkRefused()
        return set_password(reset.user, password, now=now)
