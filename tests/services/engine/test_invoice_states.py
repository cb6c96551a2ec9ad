"""Property test of the state machine (docs/payment-engine.md): random sequences, repeats and reorderings of
provider statuses, with expiry and cancel attempts mixed in, never break the invariants (the
settlement statement's roll-up among them)."""
import datetime as dt
from decimal import Decimal

from hypothesis import HealthCheck, given, settings as hyp_settings, strategies as st

from models.base import db
from models.events import Event
from models.invoices import Invoice
from models.transactions import Transaction
from providers import base
from providers.base import DepositStatus
from services.engine import expiry, invoice_states, payments
from tests import factories
from tests.support.statement_oracle import assert_roll_up_matches_rows

START = dt.datetime(2030, 1, 1, 12, 0, 0)
FINAL = ("refunded", "failed")
DUE = Decimal("10.05")
# What an untrusted provider may send instead of an amount (docs/payment-engine.md).
MALFORMED = {"nan": Decimal("NaN"), "negative": Decimal("-1"), "huge": Decimal("1e40"), "missing": None}


def _status(name, full, payout_hash, excess=False, malformed=None):
    amount_in = (DUE + 2 if excess else DUE) if full else Decimal("5")
    delivered = name == base.SUCCESS
    refunded = amount_in if name == base.REFUNDED else Decimal(2) if excess and delivered else None
    if malformed is not None:
        amount_in = MALFORMED[malformed]
        name = name if malformed != "missing" else base.PROCESSING
    return DepositStatus(
        status=name, correlation_id="corr", amount_in=amount_in, amount_in_usd=amount_in,
        # A USD valuation below par must not make a correct delivery look short.
        amount_out=Decimal("10") if delivered else None, amount_out_usd=Decimal("9.99") if delivered else None,
        refunded_amount=refunded,
        origin_tx_hashes=("0xorigin",) if name != base.PENDING_DEPOSIT else (),
        destination_tx_hashes=("payout-hash",) if delivered and payout_hash else (),
        refund_tx_hashes=("0xrefund",) if refunded is not None else ())


class _NoDeposit:
    def deposit_status(self, address, memo=None):
        return DepositStatus(status=base.PENDING_DEPOSIT)


steps = st.lists(st.one_of(
    # Mostly full deposits with a payout hash, so that settlement (and what must not follow it) is common;
    # some overpaid (the provider refunds the excess), some with malformed provider numbers.
    st.tuples(st.just("status"), st.sampled_from(base.STATUSES), st.sampled_from([True, True, False]),
              st.sampled_from([True, True, False]), st.sampled_from([False, False, True]),
              st.sampled_from([None, None, None, *MALFORMED])),
    st.tuples(st.just("unknown"), st.none(), st.none(), st.none(), st.none(), st.none()),
    st.tuples(st.sampled_from(["expire", "cancel"]), st.none(), st.none(), st.none(), st.none(), st.none()),
), min_size=1, max_size=10)
ALLOWED = {(sources, target) for sources, target, _ in invoice_states.MOVES.values()}


def _legal(before, after):
    return before == after or any(before in sources and after == target for sources, target in ALLOWED)


@hyp_settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=steps)
def test_random_provider_histories_keep_the_invariants(store, sequence):
    invoice = factories.make_invoice(store, now=START, status="awaiting_payment", deposit_address="addr",
                                     origin_asset="usdc.eth", refund_to="buyer", amount_due=Decimal("10.05"),
                                     expires_at=START + dt.timedelta(hours=1))
    now = START
    with db.connection_context():
        settled_seen = False
        for kind, name, full, payout_hash, excess, malformed in sequence:
            now += dt.timedelta(minutes=20)
            before = Invoice.get_by_id(invoice.id)
            events_before = Event.select().where(Event.invoice == invoice.id).count()
            untrusted = kind == "unknown" or (kind == "status" and malformed is not None
                                              and (malformed == "missing" or name != base.PENDING_DEPOSIT))
            if kind == "status":
                payments.apply_deposit_status(before, _status(name, full, payout_hash, excess, malformed), now=now)
            elif kind == "unknown":
                payments.apply_deposit_status(before, DepositStatus(status="MAYBE_LATER"), now=now)
            elif kind == "expire":
                expiry.expire_one(before, _NoDeposit(), now=now)
            else:
                invoice_states.move(invoice.id, "cancel", now=now)
            after = Invoice.get_by_id(invoice.id)
            new_events = [e.type for e in Event.select().where(Event.invoice == invoice.id)
                          .order_by(Event.created_at, Event.id).offset(events_before)]
            assert _legal(before.status, after.status), (before.status, after.status)
            if untrusted:
                # Never applied, never a crash, never a guess: set aside for review, nothing else moves.
                assert (after.status, after.paid_amount, new_events) == (before.status, before.paid_amount, [])
                assert after.review_reason is not None
            if after.paid_amount is not None:
                assert after.paid_amount >= 0
            if after.received_amount is not None:   # settled: paid net of any refunded excess
                assert after.paid_amount <= DUE
            if before.deposit_seen_at is not None:      # the buyer's money is in flight: never dropped
                assert after.status not in ("expired", "cancelled") or after.status == before.status
            if before.status in FINAL or settled_seen:
                assert (after.status, after.swap_status, new_events) == (before.status, before.swap_status, [])
            # Exactly one event per move: a status change brings its event, no change brings none
            # (except settlement, the one move that keeps the status).
            if after.status != before.status:
                assert new_events[-1] == f"invoice.{after.status}" or new_events == ["invoice.paid", "invoice.settled"]
            if after.received_amount is not None:
                settled_seen = True
                assert after.swap_status is None and after.status == "paid"
                assert after.difference_amount == after.received_amount - after.paid_amount
            if after.status in ("paid", "underpaid"):
                assert after.paid_amount is not None
            if after.status == "paid":
                assert after.paid_at is not None
            if after.swap_status is not None:
                assert (after.status, after.swap_status) == ("paid", "processing")
        types = [e.type for e in Event.select().where(Event.invoice == invoice.id)]
        assert types.count("invoice.paid") <= 1 and types.count("invoice.settled") <= 1
        assert types.count("invoice.settled") == (1 if settled_seen else 0)
        kinds = [(t.type, t.transaction_hash) for t in Transaction.select().where(Transaction.invoice == invoice.id)]
        assert len(kinds) == len(set(kinds))
        assert sum(1 for kind, _ in kinds if kind == "settlement") == (1 if settled_seen else 0)
        # Every write point kept the statement's roll-up: it equals the rows summed.
        assert_roll_up_matches_rows(store.id)


def test_each_guard_says_the_same_as_a_query_and_on_a_row_in_hand(store):
    """A move's own guard is written twice (a query condition for `move`, a row test for the one-write
    Answer); over every state the guards look at, both must agree."""
    rows = [factories.make_invoice(store, now=START, status=status, swap_status=swap, deposit_seen_at=seen)
            for status in ("awaiting_payment", "paid", "underpaid", "expired")
            for swap in (None, "processing") for seen in (None, START)]
    with db.connection_context():
        for trigger, (condition, holds) in invoice_states.GUARDS.items():
            for row in rows:
                in_sql = Invoice.select().where((Invoice.id == row.id) & condition()).exists()
                assert in_sql == holds(Invoice.get_by_id(row.id)), (trigger, row.status, row.swap_status)
