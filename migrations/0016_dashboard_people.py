"""The merchant dashboard's people (issue 41): users, their memberships of stores with a role,
single-use invitation and password-reset links (only a SHA-256 digest of each token is stored),
the audit log, and a store's "everyone uses TOTP" switch.

Frozen copies, as in 0001. Indexes: an audit page reads a store's newest entries; a membership is
looked up by (user, store) and a store's team by store.
"""
import peewee as pw


def up(migrator, db):
    class Base(pw.Model):
        class Meta:
            database = db
            legacy_table_names = False

    class Store(Base):
        id = pw.UUIDField(primary_key=True)

    class User(Base):
        id = pw.UUIDField(primary_key=True)
        email = pw.CharField(max_length=254, unique=True)
        password_hash = pw.CharField(max_length=256, null=True)
        totp_secret = pw.CharField(max_length=64, null=True)
        session_epoch = pw.IntegerField(default=0)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()

    class Membership(Base):
        user = pw.ForeignKeyField(User, on_delete="CASCADE", index=False)
        store = pw.ForeignKeyField(Store, on_delete="CASCADE")
        role = pw.CharField(max_length=16)
        created_at = pw.DateTimeField()

        class Meta:
            indexes = ((("user", "store"), True),)

    class Invitation(Base):
        id = pw.UUIDField(primary_key=True)
        store = pw.ForeignKeyField(Store, on_delete="CASCADE")
        email = pw.CharField(max_length=254)
        role = pw.CharField(max_length=16)
        token_digest = pw.CharField(max_length=64, unique=True)
        invited_by = pw.ForeignKeyField(User, null=True, on_delete="SET NULL")
        expires_at = pw.DateTimeField()
        accepted_at = pw.DateTimeField(null=True)
        created_at = pw.DateTimeField()

    class PasswordReset(Base):
        id = pw.UUIDField(primary_key=True)
        user = pw.ForeignKeyField(User, on_delete="CASCADE")
        token_digest = pw.CharField(max_length=64, unique=True)
        expires_at = pw.DateTimeField()
        used_at = pw.DateTimeField(null=True)
        created_at = pw.DateTimeField()

    class AuditEntry(Base):
        id = pw.BigAutoField()
        store = pw.ForeignKeyField(Store, on_delete="CASCADE", index=False)
        user = pw.ForeignKeyField(User, null=True, on_delete="SET NULL")
        actor = pw.CharField(max_length=254)
        action = pw.CharField(max_length=64)
        target = pw.CharField(max_length=128, null=True)
        detail = pw.TextField(null=True)
        address = pw.CharField(max_length=64, null=True)
        created_at = pw.DateTimeField()

        class Meta:
            table_name = "audit_entry"
            indexes = ((("store", "created_at"), False),)

    db.create_tables([User, Membership, Invitation, PasswordReset, AuditEntry])
    migrator.migrate(migrator.add_column("store", "require_totp", pw.BooleanField(default=False)))
