"""Mail: the outbox of messages Tender sends (docs/email.md), and each store's choice of what it
wants and where.

A `Mail` row is written in the same transaction as the fact it reports, already rendered (subject,
text and HTML, `Message-ID`, `Date`), so every attempt sends the same bytes: a copy resent inside
the window no SMTP client can close carries the first one's `Message-ID`. `dedupe_key` is unique:
the same fact reported twice (a retried job, a replayed move) writes no second mail.
"""
import peewee as pw

from models.base import BaseModel
from models.fields import JSONTextField
from models.stores import Store

# pending -> sent | failed; `logged` when no SMTP server is configured (the mail is in the log).
STATUSES = ("pending", "sent", "failed", "logged")


class Mail(BaseModel):
    id = pw.UUIDField(primary_key=True)
    public_id = pw.CharField(max_length=40, unique=True)         # mail_…: what the CLI and logs show
    store = pw.ForeignKeyField(Store, null=True, on_delete="CASCADE", index=False)
    kind = pw.CharField(max_length=40)
    audience = pw.CharField(max_length=16)                       # merchant | buyer | user
    recipient = pw.CharField(max_length=254)
    dedupe_key = pw.CharField(max_length=400, unique=True)
    message_id = pw.CharField(max_length=200)
    subject = pw.TextField()
    text_body = pw.TextField()
    html_body = pw.TextField()
    status = pw.CharField(max_length=16, default="pending")
    attempts = pw.IntegerField(default=0)                       # counted when claimed: a crash is an attempt too
    next_attempt_at = pw.DateTimeField()
    claimed_until = pw.DateTimeField(null=True)                 # a sender's lease (infra/claims.claim_due)
    claim_token = pw.CharField(max_length=40, null=True)
    last_answer = pw.TextField(null=True)                       # the server's answer, or why it did not answer
    sent_at = pw.DateTimeField(null=True)
    created_at = pw.DateTimeField()
    updated_at = pw.DateTimeField()


# The merchant's kinds of mail (docs/email.md#what-is-sent-when), each switchable per store.
MERCHANT_KINDS = ("payment_received", "invoice_underpaid", "refund_awaiting_funds", "refund_funding_reminder",
                  "refund_succeeded", "refund_failed", "endpoint_failing", "endpoint_disabled")
MAX_RECIPIENTS = 5


class StoreNotifications(BaseModel):
    """Where a store's mail goes and which kinds it wants; a store without a row gets none."""

    store = pw.ForeignKeyField(Store, primary_key=True, on_delete="CASCADE")
    recipients = JSONTextField()                                # up to MAX_RECIPIENTS addresses
    kinds = JSONTextField()                                     # {kind: bool}; a kind missing is on
    updated_at = pw.DateTimeField()

    class Meta:
        table_name = "store_notifications"
