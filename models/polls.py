"""When to ask the provider about an invoice's deposit next, and which poller holds it now.

Kept off the invoice row (migrations/0013_poll_state.py): the pollers claim, reschedule and release
at poll cadence, and the invoice (the merchant-facing row, with its many indexes and triggers) is
written only when a provider answer changes it. One row per invoice still being polled; the row
goes once there is nothing left to ask.
"""
import peewee as pw

from models.base import BaseModel
from models.invoices import Invoice


class PollState(BaseModel):
    invoice = pw.ForeignKeyField(Invoice, primary_key=True, on_delete="CASCADE")
    phase = pw.CharField(max_length=16)                 # the poller that follows it: chain | settlement
    next_poll_at = pw.DateTimeField()
    watch_until = pw.DateTimeField()                   # never polled past this (deadline + watch window)
    claimed_until = pw.DateTimeField(null=True)         # a poller's lease on the row
    claim_token = pw.CharField(max_length=40, null=True)

    class Meta:
        table_name = "poll_state"
