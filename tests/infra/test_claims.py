"""Batch claims: disjoint between claimers, a lapsed lease is claimable again, release is guarded."""
import datetime as dt

from core.clock import utcnow
from infra import claims
from models.base import db, is_postgres
from models.polls import PollState
from tests import factories
from tests.support.concurrency import run_at_once


def _due():
    return PollState.phase == "chain"


def _claim(now, limit=10, lease=60):
    with db.connection_context():
        token, rows = claims.claim_due(PollState, _due(), order_by=(PollState.next_poll_at,), now=now,
                                       lease_seconds=lease, limit=limit)
        return token, [row.id for row in rows]


def test_two_claims_take_disjoint_batches_and_a_lapsed_lease_returns(store):
    now = utcnow()
    for _ in range(5):
        factories.make_invoice(store, next_poll_at=now)
    _, first = _claim(now, limit=3)
    _, second = _claim(now, limit=3)
    _, third = _claim(now, limit=3)
    assert len(first) == 3 and len(second) == 2 and not third and not set(first) & set(second)
    _, after_lease = _claim(now + dt.timedelta(seconds=61), limit=10)
    assert sorted(after_lease) == sorted(first + second)


def test_release_needs_the_current_token(store):
    now = utcnow()
    invoice = factories.make_invoice(store, next_poll_at=now)
    token, _ = _claim(now)
    with db.connection_context():
        assert not claims.release(PollState, invoice.id, "not-the-token", next_poll_at=now)
        assert claims.release(PollState, invoice.id, token, next_poll_at=now)
        assert PollState.get_by_id(invoice.id).claim_token is None


def test_concurrent_claimers_never_share_an_invoice(store):
    now = utcnow()
    for _ in range(60):
        factories.make_invoice(store, next_poll_at=now)
    results = []

    def claimer():
        for _ in range(10):
            results.extend(_claim(now, limit=4)[1])

    errors = run_at_once(claimer, 4)
    assert len(results) == len(set(results))
    if is_postgres():          # SKIP LOCKED: nobody waits, nobody fails, everything is claimed once
        assert not errors and len(results) == 60


def test_release_each_gives_back_only_the_rows_of_our_lease_each_with_its_value(store):
    now = utcnow()
    invoices = [factories.make_invoice(store, next_poll_at=now) for _ in range(3)]
    token, claimed = _claim(now, limit=2)
    stranger = next(invoice.id for invoice in invoices if invoice.id not in claimed)
    due = {row_id: now + dt.timedelta(seconds=10 * (index + 1)) for index, row_id in enumerate(claimed)}
    with db.connection_context():
        assert claims.release_each(PollState, token, PollState.next_poll_at, {**due, stranger: now}) == 2
        rows = {row.id: row for row in PollState.select()}
    assert {row_id: rows[row_id].next_poll_at for row_id in claimed} == due
    assert all(rows[row_id].claim_token is None for row_id in claimed)
    assert rows[stranger].next_poll_at == now
