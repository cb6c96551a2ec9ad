"""When to ask the provider next about a deposit (a buyer's to an invoice, a merchant's funding
of a refund), and which poller holds it now.

Kept off the invoice and refund rows (migrations/0013_poll_state.py): the pollers claim, reschedule
and release at poll cadence, and those merchant-facing rows (the invoice with its many indexes
and triggers) are written only when a provider answer changes them. One row per invoice or
refund still being polled, with that row's id; it goes once there is nothing left to ask.
"""
import peewee as pw

from models.base import BaseModel
from models.invoices import Invoice
from models.refunds import Refund


class PollState(BaseModel):
    id = pw.UUIDField(primary_key=True)                 # the polled invoice's or refund's own id
    invoice = pw.ForeignKeyField(Invoice, null=True, on_delete="CASCADE", index=False)   # one of the two
    refund = pw.ForeignKeyField(Refund, null=True, on_delete="CASCADE", index=False)
    phase = pw.CharField(max_length=16)                 # the poller that follows it: chain | settlement | refunds
    next_poll_at = pw.DateTimeField()
    watch_until = pw.DateTimeField()                   # never polled past this (deadline + watch window)
    claimed_until = pw.DateTimeField(null=True)         # a poller's lease on the row
    claim_token = pw.CharField(max_length=40, null=True)

    class Meta:
        table_name = "poll_state"
