"""The merchant dashboard's people (docs/dashboard.md): users, their roles in stores, the links
that let them in, and the audit log of what they changed."""
import peewee as pw

from models.base import BaseModel
from models.stores import Store

ROLES = ("owner", "admin", "developer", "viewer")


class User(BaseModel):
    id = pw.UUIDField(primary_key=True)
    email = pw.CharField(max_length=254, unique=True)            # lower-cased
    password_hash = pw.CharField(max_length=256, null=True)      # argon2id; None until an invitation is accepted
    totp_secret = pw.CharField(max_length=64, null=True)
    # Sessions remember the epoch they began in; a password change moves it, ending every other session.
    session_epoch = pw.IntegerField(default=0)
    created_at = pw.DateTimeField()
    updated_at = pw.DateTimeField()


class Membership(BaseModel):
    user = pw.ForeignKeyField(User, backref="memberships", on_delete="CASCADE", index=False)
    store = pw.ForeignKeyField(Store, on_delete="CASCADE")
    role = pw.CharField(max_length=16)
    created_at = pw.DateTimeField()

    class Meta:
        indexes = ((("user", "store"), True),)


class Invitation(BaseModel):
    id = pw.UUIDField(primary_key=True)
    store = pw.ForeignKeyField(Store, on_delete="CASCADE")
    email = pw.CharField(max_length=254)
    role = pw.CharField(max_length=16)
    token_digest = pw.CharField(max_length=64, unique=True)      # SHA-256 of the link's token
    invited_by = pw.ForeignKeyField(User, null=True, on_delete="SET NULL")
    expires_at = pw.DateTimeField()
    accepted_at = pw.DateTimeField(null=True)
    created_at = pw.DateTimeField()


class PasswordReset(BaseModel):
    id = pw.UUIDField(primary_key=True)
    user = pw.ForeignKeyField(User, on_delete="CASCADE")
    token_digest = pw.CharField(max_length=64, unique=True)
    expires_at = pw.DateTimeField()
    used_at = pw.DateTimeField(null=True)
    created_at = pw.DateTimeField()


class AuditEntry(BaseModel):
    id = pw.BigAutoField()
    store = pw.ForeignKeyField(Store, on_delete="CASCADE", index=False)
    user = pw.ForeignKeyField(User, null=True, on_delete="SET NULL")
    actor = pw.CharField(max_length=254)                         # the e-mail, or "operator" for the CLI
    action = pw.CharField(max_length=64)                         # e.g. "invoice.cancel"
    target = pw.CharField(max_length=128, null=True)             # the object's public id
    detail = pw.TextField(null=True)
    address = pw.CharField(max_length=64, null=True)             # the client's address
    created_at = pw.DateTimeField()

    class Meta:
        table_name = "audit_entry"
        indexes = ((("store", "created_at"), False), (("store", "id"), False))    # the second: 0021
