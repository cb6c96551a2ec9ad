"""A store's backlog beyond its in-flight cap: one run sends it all, writing each batch's results in
the transaction that claims the next, and no result is lost when that claim fails."""
import dataclasses
import datetime as dt
import threading
import time

import peewee as pw
import pytest

from core.clock import utcnow
from models import compiled
from models.base import db, is_postgres
from models.webhooks import WebhookAttempt, WebhookDelivery
from services.webhooks import delivery_claim, delivery_policy, outbox, webhook_delivery
from tests import factories
from tests.support.concurrency import run_at_once
from tests.services.webhooks.test_delivery import create_invoice, delivery_rows, make_endpoint


def _backlog(client, auth, receiver, *, endpoints: int, events: int) -> int:
    for number in range(endpoints):
        make_endpoint(client, auth, receiver.url(f"/hook-{number}"))
    for number in range(events):
        create_invoice(client, auth, external_order_id=f"ord-{number}")
    with db.connection_context():
        return outbox.relay(now=utcnow(), grace=dt.timedelta(0))


def _sent_once_each(receiver, created: int) -> None:
    rows = delivery_rows()
    assert len(rows) == created
    assert [(row.status, row.attempts, row.claim_token) for row in rows] == [("succeeded", 1, None)] * created
    with db.connection_context():
        assert sorted(attempt.number for attempt in WebhookAttempt.select()) == [1] * created
    delivery_ids = sorted(request.headers["X-Tender-Delivery-Id"] for request in receiver.requests)
    assert delivery_ids == sorted(row.public_id for row in rows)


def test_a_backlog_beyond_the_store_cap_goes_out_in_one_run_results_written_with_the_next_claim(
        client, auth, receiver, policy, monkeypatch):
    policy = dataclasses.replace(policy, concurrency=8, max_in_flight_per_endpoint=1)
    assert policy.caps.per_store == 2
    created = _backlog(client, auth, receiver, endpoints=3, events=4)
    alone = []
    real_record = webhook_delivery.record
    monkeypatch.setattr(webhook_delivery, "record", lambda *a, **k: alone.append(1) or real_record(*a, **k))
    with db.connection_context():
        counts = webhook_delivery.deliver_due(policy)
    assert created == 12 and counts.succeeded == 12
    _sent_once_each(receiver, created)
    # Every batch but the last was written by the transaction that claimed the next batch.
    assert len(alone) == 1


def test_results_are_written_when_the_claim_beside_them_fails(client, auth, receiver, policy, monkeypatch):
    policy = dataclasses.replace(policy, concurrency=8, max_in_flight_per_endpoint=1)
    created = _backlog(client, auth, receiver, endpoints=3, events=2)
    calls = []
    real_claim = delivery_claim.claim_deliveries_in_transaction

    def claim_failing_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:         # the first claim written beside results
            raise pw.OperationalError("the claim's statement failed")
        return real_claim(*args, **kwargs)

    monkeypatch.setattr(delivery_claim, "claim_deliveries_in_transaction", claim_failing_once)
    with db.connection_context():
        counts = webhook_delivery.deliver_due(policy)
    assert len(calls) >= 3 and counts.succeeded == created == 6
    _sent_once_each(receiver, created)


def test_a_claim_says_whether_the_caps_left_due_deliveries_behind(client, auth, receiver, either_way):
    make_endpoint(client, auth, receiver.url("/one"))
    for number in range(5):
        create_invoice(client, auth, external_order_id=f"ord-{number}")
    caps = delivery_policy.DeliveryCaps(per_target=2, per_store=4, lease_seconds=60)
    now = utcnow()
    with db.connection_context():
        outbox.relay(now=now, grace=dt.timedelta(0))
        taken = []
        for _ in range(3):
            claimed = delivery_claim.claim_deliveries(f"token-{len(taken)}", caps, now=now, limit=10)
            taken.append((claimed.taken, claimed.more_due))
            # The results come back: nothing of this claim is in flight any more.
            WebhookDelivery.update(claim_token=None, status="succeeded").where(
                WebhookDelivery.claim_token.is_null(False)).execute()
        assert taken == [(2, True), (2, True), (1, False)]
        assert delivery_claim.claim_deliveries("token-last", caps, now=now, limit=10) == delivery_claim.Claimed(0, False)


@pytest.fixture(params=["rank every due delivery", "walk the targets"])
def either_way(request, monkeypatch):
    """A claim ranks every due delivery while there are at most RANK_ALL_UP_TO, and walks the
    targets beyond that (services/webhooks/delivery_claim.py): the tests that take this run both ways."""
    if request.param == "walk the targets":
        monkeypatch.setattr(delivery_claim, "RANK_ALL_UP_TO", 0)
    return request.param


def test_a_claim_takes_each_targets_oldest_due_deliveries_walking_past_targets_with_none_due(
        client, auth, store, receiver, either_way):
    """Every target (an endpoint; a store's legacy callbacks count as one) with a delivery due
    gives its oldest, one whose deliveries are all scheduled later gives none and does not stop
    the walk, and what a target's cap leaves is reported."""
    for name in ("a", "b", "c"):
        make_endpoint(client, auth, receiver.url(f"/{name}"))
    for number in range(5):
        factories.make_invoice(store, callback_url=receiver.url("/callback"))
    now = utcnow()
    with db.connection_context():
        outbox.relay(now=now, grace=dt.timedelta(0))
        rows = list(WebhookDelivery.select())
        assert len(rows) == 20      # 5 events to 3 endpoints and the callback
        # Due at distinct times, newest created first, so "oldest" is not insertion order.
        for place, row in enumerate(sorted(rows, key=lambda row: str(row.id))):
            WebhookDelivery.update(next_attempt_at=now - dt.timedelta(seconds=place)).where(
                WebhookDelivery.id == row.id).execute()
        later = [row.id for row in rows if row.endpoint_id and row.endpoint.url.endswith("/b")]
        WebhookDelivery.update(next_attempt_at=now + dt.timedelta(minutes=5)).where(
            WebhookDelivery.id.in_(later)).execute()
        due = {}
        for row in WebhookDelivery.select().where(WebhookDelivery.next_attempt_at <= now):
            due.setdefault(row.endpoint_id or row.store_id, []).append((row.next_attempt_at, str(row.id)))
        expected = {delivery_id for target in due.values() for _, delivery_id in sorted(target)[:2]}
        claimed = delivery_claim.claim_deliveries("walk", delivery_policy.DeliveryCaps(per_target=2, per_store=100, lease_seconds=60),
                                          now=now, limit=100)
        taken = {str(row.id) for row in WebhookDelivery.select().where(WebhookDelivery.claim_token == "walk")}
    assert len(due) == 3 and claimed.taken == 6 and claimed.more_due
    assert taken == expected


def test_a_claim_skips_a_due_delivery_another_transaction_is_writing_instead_of_waiting(
        client, auth, store, receiver, either_way):
    """PostgreSQL: a due row locked by another transaction (a late result of a lapsed claim, a
    replay) is left for a later claim; the claim neither waits for it nor fails."""
    if not is_postgres():
        pytest.skip("row locks: PostgreSQL (TEST_DATABASE_URL)")
    import psycopg2

    for name in ("a", "b"):
        make_endpoint(client, auth, receiver.url(f"/{name}"))
    create_invoice(client, auth)
    now = utcnow()
    with db.connection_context():
        outbox.relay(now=now, grace=dt.timedelta(0))
        busy, free = [row.id for row in WebhookDelivery.select().order_by(WebhookDelivery.id)]
        other = psycopg2.connect(dbname=db.obj.database, **db.obj.connect_params)
        try:
            with other.cursor() as cursor:
                cursor.execute("SET lock_timeout = '5s'")
                cursor.execute("SELECT id FROM webhook_delivery WHERE id = %s FOR UPDATE", (str(busy),))
            db.execute_sql("SET lock_timeout = '2s'")      # a wait would fail the claim, not hang the test
            claimed = delivery_claim.claim_deliveries("around", delivery_policy.DeliveryCaps(4, 8, 60), now=now, limit=10)
            taken = [row.id for row in WebhookDelivery.select().where(WebhookDelivery.claim_token == "around")]
        finally:
            db.execute_sql("SET lock_timeout = 0")
            other.rollback()
            other.close()
        assert claimed.taken == 1 and taken == [free]
        assert delivery_claim.claim_deliveries("later", delivery_policy.DeliveryCaps(4, 8, 60), now=now, limit=10).taken == 1


def _due_to_endpoints(client, auth, receiver, *, endpoints: int, events: int, tag: str) -> None:
    for number in range(endpoints):
        make_endpoint(client, auth, receiver.url(f"/{tag}-{number}"))
    for number in range(events):
        create_invoice(client, auth, external_order_id=f"{tag}-{number}")
    with db.connection_context():
        outbox.relay(now=utcnow(), grace=dt.timedelta(0))


def _held(caps, now, token) -> int:
    return delivery_claim.claim_deliveries(token, caps, now=now, limit=100).taken


def test_a_store_alone_with_quick_receivers_may_use_half_the_slots_and_no_more_once_another_is_due(
        client, auth, other_auth, receiver, either_way):
    caps = delivery_policy.DeliveryCaps(per_target=4, per_store=2, lease_seconds=60, per_store_alone=4)
    _due_to_endpoints(client, auth, receiver, endpoints=2, events=4, tag="alone")      # 8 due
    now = utcnow()
    with db.connection_context():
        assert _held(caps, now, "first") == 4             # nobody else has anything due
        assert _held(caps, now, "again") == 0             # at its cap while alone
    _due_to_endpoints(client, other_auth, receiver, endpoints=1, events=1, tag="other")
    with db.connection_context():
        claimed = delivery_claim.claim_deliveries("both", caps, now=utcnow(), limit=100)
        rows = list(WebhookDelivery.select().where(WebhookDelivery.claim_token == "both"))
        # Only the other store's delivery: the first holds 4, over its shared cap of 2.
        assert claimed.taken == 1 and rows[0].endpoint.url.endswith("/other-0")


def test_a_store_alone_whose_attempt_lasts_a_second_is_back_to_its_quarter(client, auth, receiver):
    caps = delivery_policy.DeliveryCaps(per_target=4, per_store=2, lease_seconds=60, per_store_alone=4)
    _due_to_endpoints(client, auth, receiver, endpoints=2, events=4, tag="slow")
    now = utcnow()
    with db.connection_context():
        assert delivery_claim.claim_deliveries("one", caps, now=now, limit=1).taken == 1
        a_second_later = now + delivery_policy.QUICK_ATTEMPT + dt.timedelta(milliseconds=1)
        # Its attempt in flight began more than a second ago: 2 in all, so 1 more.
        assert _held(caps, a_second_later, "slowed") == 1


def test_store_caps_shrink_as_the_stores_being_served_multiply_and_never_below_one(
        client, auth, receiver, either_way):
    """4 stores at a cap of 4 would hold all 16 of a run's slots: with `all_stores` 12 each holds 3,
    and a fifth store's deliveries are still claimed (its cap: 12 // 5); a cap is never below one."""
    caps = delivery_policy.DeliveryCaps(per_target=2, per_store=4, lease_seconds=60, all_stores=12)
    for number in range(4):
        headers = {"Authorization": f"Bearer {factories.make_key(factories.make_store(name=f'Busy {number}'))}"}
        _due_to_endpoints(client, headers, receiver, endpoints=2, events=3, tag=f"busy-{number}")   # 6 due each
    now = utcnow()
    with db.connection_context():
        assert _held(caps, now, "busy") == 12
        held = [row.store_id for row in WebhookDelivery.select().where(WebhookDelivery.claim_token == "busy")]
        assert sorted(held.count(store) for store in set(held)) == [3, 3, 3, 3]
    _due_to_endpoints(client, auth, receiver, endpoints=2, events=1, tag="quiet")          # 2 due
    with db.connection_context():
        assert _held(dataclasses.replace(caps, all_stores=2), utcnow(), "floor") == 1     # 2 // 5 is 0: one
        assert _held(caps, utcnow(), "quiet") == 1                                        # 12 // 5: two in all


def test_concurrent_runs_send_each_delivery_once_within_the_caps(client, auth, receiver, policy):
    """Four runs at once, as four `webhooks` workers would: claims are serialised and disjoint, so
    every delivery is sent exactly once and one attempt is recorded for each."""
    policy = dataclasses.replace(policy, concurrency=8, max_in_flight_per_endpoint=2)
    created = _backlog(client, auth, receiver, endpoints=4, events=10)

    def run():
        with db.connection_context():
            webhook_delivery.deliver_due(policy)

    assert not run_at_once(run, 4)
    with db.connection_context():
        webhook_delivery.deliver_due(policy)        # whatever a run left to the caps
    assert created == 40
    _sent_once_each(receiver, created)


def test_hanging_receivers_hold_up_the_others_attempts_by_a_fraction_of_a_second(client, auth, receiver, policy):
    """A run starts two attempts at once and more whenever none finishes for a moment: six hanging
    endpoints take the first two (most likely) and more, and the two quick ones are still sent
    within a fraction of a second."""
    policy = dataclasses.replace(policy, concurrency=32, max_in_flight_per_endpoint=1, timeout_seconds=5)
    release = None
    for number in range(6):
        release = receiver.hold(f"/hang-{number}")
        make_endpoint(client, auth, receiver.url(f"/hang-{number}"))
    for number in range(2):
        make_endpoint(client, auth, receiver.url(f"/quick-{number}"))
    create_invoice(client, auth, external_order_id="one")
    with db.connection_context():
        outbox.relay(now=utcnow(), grace=dt.timedelta(0))

    def deliver():
        with db.connection_context():
            webhook_delivery.deliver_due(policy)

    run = threading.Thread(target=deliver, daemon=True)
    began = time.monotonic()
    run.start()
    try:
        receiver.wait_for(6 + 2, timeout=5)         # every request arrived, the hanging ones included
        quick = [request.at - began for request in receiver.requests if request.path.startswith("/quick")]
        assert len(quick) == 2 and max(quick) < 1.0, quick
    finally:
        release.set()
        run.join(30)
    assert not run.is_alive()


def test_the_fan_outs_reads_run_from_text_compiled_once(client, auth, receiver, policy):
    """A fan-out runs for every event: its reads are compiled by peewee once (models/compiled.py),
    which holds only while the values passed are exactly those peewee would bind."""
    make_endpoint(client, auth, receiver.url("/hook"))
    create_invoice(client, auth)
    with db.connection_context():
        webhook_delivery.fan_out_and_deliver(policy)
    for key in ("undispatched events", "mark event dispatched", "fan-out targets"):
        assert compiled.is_compiled((key,)), key
    receiver.wait_for(1)
