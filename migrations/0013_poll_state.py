"""Poll state off the invoice and refund rows (issue 31).

`poll_state` holds, per invoice or refund still being polled (keyed by its id), when to ask the
provider next, which poller follows it and until when, and the claim (lease and token) of the
worker polling it now. Moving them off `invoice` and `refund` means a poll that learns nothing
writes only this narrow row, and the invoice is written once per provider answer that changes it.

The rows are copied from the columns they replace (every row a poller could still claim: watched
invoices on `chain`, paid ones converting on `settlement`, watched refunds on `refunds`), then
those columns and their indexes go. Claims held during the upgrade are carried over as they are.
"""
import datetime as dt

import peewee as pw

WATCH_AFTER_DEADLINE = dt.timedelta(hours=24)   # the pollers' watch window at the time of this migration
WATCHED = ("awaiting_payment", "underpaid", "expired", "cancelled")
REFUNDS_WATCHED = ("awaiting_funds", "processing", "expired", "cancelled")


def up(migrator, db):
    class Invoice(pw.Model):
        id = pw.UUIDField(primary_key=True)

        class Meta:
            database = db
            table_name = "invoice"

    class Refund(pw.Model):
        id = pw.UUIDField(primary_key=True)

        class Meta:
            database = db
            table_name = "refund"

    class PollState(pw.Model):
        id = pw.UUIDField(primary_key=True)
        invoice = pw.ForeignKeyField(Invoice, null=True, on_delete="CASCADE", index=False)
        refund = pw.ForeignKeyField(Refund, null=True, on_delete="CASCADE", index=False)
        phase = pw.CharField(max_length=16)
        next_poll_at = pw.DateTimeField()
        watch_until = pw.DateTimeField()
        claimed_until = pw.DateTimeField(null=True)
        claim_token = pw.CharField(max_length=40, null=True)

        class Meta:
            database = db
            table_name = "poll_state"

    db.create_tables([PollState])
    # The pollers' claim: due rows of one phase, oldest first; the claimer reads back its token.
    db.execute_sql("CREATE INDEX poll_state_phase_next_poll_at ON poll_state (phase, next_poll_at)")
    db.execute_sql("CREATE INDEX poll_state_claim_token ON poll_state (claim_token) WHERE claim_token IS NOT NULL")

    cursor = db.execute_sql(
        "SELECT id, status, swap_status, next_poll_at, expires_at, claimed_until, claim_token FROM invoice "
        "WHERE next_poll_at IS NOT NULL")
    rows = []
    for invoice_id, status, swap_status, next_poll_at, expires_at, claimed_until, claim_token in cursor.fetchall():
        if status == "paid" and swap_status == "processing":
            phase = "settlement"
        elif status in WATCHED:
            phase = "chain"
        else:
            continue                 # no poller could claim it: nothing left to ask
        rows.append(_row(PollState, invoice_id, phase, next_poll_at, expires_at, claimed_until, claim_token,
                         invoice=invoice_id))
    cursor = db.execute_sql(
        "SELECT id, status, next_poll_at, expires_at, claimed_until, claim_token FROM refund "
        "WHERE next_poll_at IS NOT NULL")
    for refund_id, status, next_poll_at, expires_at, claimed_until, claim_token in cursor.fetchall():
        if status in REFUNDS_WATCHED:
            rows.append(_row(PollState, refund_id, "refunds", next_poll_at, expires_at, claimed_until, claim_token,
                             refund=refund_id))
    for start in range(0, len(rows), 500):
        PollState.insert_many(rows[start:start + 500]).execute()

    for table, indexes in (("invoice", ("invoice_next_poll_at", "invoice_claim_token")), ("refund", ("refund_due",))):
        for index in indexes:
            db.execute_sql(f"DROP INDEX IF EXISTS {index}")
        for column in ("next_poll_at", "claimed_until", "claim_token"):
            db.execute_sql(f"ALTER TABLE {table} DROP COLUMN {column}")


def _row(model, row_id, phase, next_poll_at, expires_at, claimed_until, claim_token, **owner) -> dict:
    field = model.next_poll_at        # the driver's values, as the columns' type reads them
    return {"id": row_id, "phase": phase, "next_poll_at": field.python_value(next_poll_at),
            "watch_until": field.python_value(expires_at) + WATCH_AFTER_DEADLINE,
            "claimed_until": field.python_value(claimed_until), "claim_token": claim_token, **owner}
