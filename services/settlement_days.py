"""What counts on which day of the settlement statement (docs/exports.md#the-settlement-statement):
the one definition, kept as the daily roll-up `settlement_day`, on every database alike.

* A paid invoice adds 1 to `invoices_paid` and its `paid_amount` to `gross_paid` on the UTC day of
  its `paid_at`; when either changes, the old contribution is taken back and the new one added.
* A settlement transaction adds its `amount` to `received`, and its invoice's `difference_amount`
  to `difference`, on the day of its `created_at`; when the invoice's difference changes later, the
  change is added on the day of each of its settlement transactions.
* A settlement transaction also adds its invoice's `fee_amount` (the operator's fee, fixed when the
  buyer committed) to `fees`.
* A refund transaction adds 1 to `refunds` on the day of its `created_at` and, when it delivered a
  merchant refund, that refund's amount (in the invoice currency) to `refunded`.

Every write point calls this module in the transaction that writes the rows: `invoice_written`
from the invoice's writes (invoice_states), `transaction_recorded` from the one function that
inserts transactions (services/engine/transactions.py). `rebuild` sums days again from the rows
by the same rules, for rows that came in another way (a bulk load). The statement reads the roll-up
(services/books/reports.py); the tests compare it with the rows summed directly.
"""
from __future__ import annotations

from collections import defaultdict
import contextlib
import datetime as dt
import decimal
from decimal import Decimal
import functools

import peewee as pw

from infra import database
from models.invoices import Invoice
from models.refunds import Refund
from models.settlement_days import SettlementDay
from models.transactions import Transaction

# The invoice columns the roll-up sums: a write that changes one of them must call `invoice_written`.
SUMMED_FIELDS = frozenset({"paid_at", "paid_amount", "difference_amount"})
# The transaction types it counts.
COUNTED_TYPES = ("settlement", "refund")


class _Additions:
    """What to add to which day row, gathered so that each row is written once."""

    def __init__(self):
        self.rows: dict = defaultdict(lambda: defaultdict(int))

    def add(self, store_id, day: dt.date, currency: str, **amounts) -> None:
        row = self.rows[(store_id, day, currency)]
        for name, amount in amounts.items():
            row[name] += amount

    def write(self, handle=None) -> None:
        # Always in the same order, so two transactions that add to the same rows never deadlock.
        ordered = sorted(self.rows.items(), key=lambda item: (str(item[0][0]), item[0][1], item[0][2]))
        for (store_id, day, currency), amounts in ordered:
            if any(amounts.values()):
                database.add_to_row(SettlementDay, {"store": store_id, "day": day, "currency": currency},
                                    dict(amounts), database=handle)


def _amount(value) -> Decimal:
    return Decimal(0) if value is None else value


def _exact(function):
    """Run `function` with Decimal arithmetic wide enough for NUMERIC(36, 18) amounts: the
    default 28 digits would round a sum, a difference or a negated amount."""
    @functools.wraps(function)
    def exactly(*args, **kwargs):
        with decimal.localcontext(decimal.Context(prec=80)):
            return function(*args, **kwargs)
    return exactly


# --- The rules ------------------------------------------------------------------------------------

def _paid(additions: _Additions, invoice: Invoice, sign: int) -> None:
    if invoice.paid_at is not None:
        additions.add(invoice.store_id, invoice.paid_at.date(), invoice.currency, invoices_paid=sign,
                      gross_paid=sign * _amount(invoice.paid_amount), movements=sign)


def _transaction(additions: _Additions, transaction: Transaction, currency: str, difference, refunded,
                 fee=None) -> None:
    """`currency`, `difference` and `fee`: the invoice's, as the database holds them when the row is added."""
    day = transaction.created_at.date()
    if transaction.type == "settlement":
        # `fees` only when there is one: a schema from before fees (migration 0014's rebuild) has no column.
        additions.add(transaction.store_id, day, currency, received=transaction.amount,
                      difference=_amount(difference), movements=1, **({"fees": fee} if fee else {}))
    elif transaction.type == "refund":
        additions.add(transaction.store_id, day, currency, refunds=1, refunded=_amount(refunded), movements=1)


def _difference_changed(additions: _Additions, before: Invoice, after: Invoice) -> None:
    change = _amount(after.difference_amount) - _amount(before.difference_amount)
    settled = (Transaction.select(Transaction.created_at)
               .where((Transaction.invoice == after.id) & (Transaction.type == "settlement")))
    for transaction in settled:
        additions.add(after.store_id, transaction.created_at.date(), after.currency, difference=change)


# --- The write points -----------------------------------------------------------------------------

@_exact
def invoice_written(before: Invoice | None, after: Invoice) -> None:
    """The invoice row `before` (None: a new row) is now `after`, in this transaction."""
    if before is not None and all(getattr(before, name) == getattr(after, name) for name in SUMMED_FIELDS):
        return
    additions = _Additions()
    if before is not None:
        _paid(additions, before, -1)
        if before.difference_amount != after.difference_amount:
            _difference_changed(additions, before, after)
    _paid(additions, after, 1)
    additions.write()


@_exact
def transaction_recorded(transaction: Transaction, invoice: Invoice, *, refund_amount=None) -> None:
    """`transaction` was inserted in this transaction; `invoice` is its invoice as the database
    holds it now (its currency, and the difference a settlement adds); `refund_amount`: the amount
    of the merchant refund it delivered, when the caller has it in hand (else it is read)."""
    if transaction.type not in COUNTED_TYPES:
        return
    refunded = refund_amount
    if refunded is None and transaction.type == "refund" and transaction.refund_id is not None:
        refunded = Refund.select(Refund.amount).where(Refund.id == transaction.refund_id).scalar()
        refunded = None if refunded is None else Refund.amount.python_value(refunded)
    additions = _Additions()
    _transaction(additions, transaction, invoice.currency, invoice.difference_amount, refunded, invoice.fee_amount)
    additions.write()


# --- Summing days again from the rows -------------------------------------------------------------

@_exact
def rebuild(first: dt.date, last: dt.date, *, store_id=None, handle=None, with_fees: bool = True) -> int:
    """Replace the day rows from `first` to `last` (inclusive; of one store, or of all) with the
    rows' contributions summed again by the rules above: each contribution belongs to the day of
    the row it comes from, so a day is summed from that day's rows alone (one day at a time, so
    memory stays small). For rows written around the write points (a bulk load); returns the number
    of day rows written. One transaction, in which the payments that commit meanwhile wait to add
    to the roll-up, so each is counted once: either in the rows summed here or by its own write.
    `handle`: another database than the application's (a migration's); `with_fees`: False on a schema
    from before the operator's fee (migration 0019)."""
    written = 0
    day = first
    bound = handle.bind_ctx([SettlementDay, Invoice, Transaction, Refund]) if handle else contextlib.nullcontext()
    with bound, database.sole_writer_of(SettlementDay, database=handle):
        while day <= last:
            written += _rebuild_day(day, store_id, handle, with_fees)
            day += dt.timedelta(days=1)
    return written


def _rebuild_day(day: dt.date, store_id, handle, with_fees: bool) -> int:
    since = dt.datetime.combine(day, dt.time())
    until = since + dt.timedelta(days=1)

    def scope(model):
        return (model.store == store_id) if store_id is not None else True

    SettlementDay.delete().where((SettlementDay.day == day) & scope(SettlementDay)).execute()
    additions = _Additions()
    paid = (Invoice.select(Invoice.id, Invoice.store, Invoice.currency, Invoice.paid_at, Invoice.paid_amount)
            .where((Invoice.paid_at >= since) & (Invoice.paid_at < until) & scope(Invoice)))
    for invoice in paid.iterator():
        _paid(additions, invoice, 1)
    moved = (Transaction.select(Transaction.id, Transaction.store, Transaction.type, Transaction.amount,
                                Transaction.created_at, Invoice.currency, Invoice.difference_amount,
                                (Invoice.fee_amount if with_fees else pw.Value(None)).alias("fee_amount"),
                                Refund.amount.alias("refunded"))
             .join(Invoice, on=(Transaction.invoice == Invoice.id))
             .switch(Transaction).join(Refund, pw.JOIN.LEFT_OUTER, on=(Transaction.refund == Refund.id))
             .where(Transaction.type.in_(COUNTED_TYPES) & (Transaction.created_at >= since)
                    & (Transaction.created_at < until) & scope(Transaction))
             .objects())
    for row in moved.iterator():
        refunded = None if row.refunded is None else Refund.amount.python_value(row.refunded)
        _transaction(additions, row, row.currency, row.difference_amount, refunded, row.fee_amount)
    additions.write(handle)
    return len(additions.rows)
