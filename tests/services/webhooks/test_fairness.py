"""No tenant stalls another (docs/webhooks.md#fairness): one store's endpoint trickles bytes with a
backlog of 50 events; another store's endpoint still gets each new event within 5 s. The jobs run
as the embedded default runs them (a worker and the scheduler in threads, on this run's Redis)."""
import dataclasses
import datetime as dt
import threading
import time

import jobs
from core.clock import utcnow
from models.base import db
from scheduler import embedded
from services.webhooks import delivery_policy, outbox, webhook_delivery
from tests import factories
from tests.support.receiver import Receiver
from tests.services.webhooks.test_delivery import create_invoice, make_endpoint

BACKLOG = 50


def test_a_trickling_endpoint_with_a_backlog_never_delays_another_stores_deliveries(
        client, auth, other_auth, settings):
    runtime = dataclasses.replace(settings, webhook_timeout_seconds=10, webhook_claim_seconds=60,
                                  webhook_concurrency=8, webhook_max_in_flight_per_endpoint=4)
    slow, fast = Receiver(), Receiver()
    slow.trickle("/slow", every=0.2)
    with slow, fast:
        make_endpoint(client, auth, slow.url("/slow"))
        make_endpoint(client, other_auth, fast.url("/fast"))
        for number in range(BACKLOG):
            create_invoice(client, auth, external_order_id=f"slow-{number}")
        workers = embedded.start(runtime, tick_seconds=0.1)
        try:
            slow.wait_for(4, path="/slow", timeout=15)        # the slow endpoint holds its attempts
            trickling_since = time.monotonic()
            for number in range(3):
                began = time.monotonic()
                invoice = create_invoice(client, other_auth, external_order_id=f"fast-{number}")
                arrived = fast.wait_for(number + 1, path="/fast", timeout=5)
                assert invoice["id"].encode() in arrived[-1].body
                latency = time.monotonic() - began
                assert latency < 5, latency
            if time.monotonic() - trickling_since < 9:      # its first attempts are still trickling...
                assert len(slow.to("/slow")) == 4             # ...and it got no more than its cap
        finally:
            slow.stopping.set()          # the receivers close their sockets; the run ends
            workers.stop(timeout=30)
            jobs.use_runtime(settings)


def test_one_stores_backlog_at_slow_endpoints_never_holds_the_slots_another_stores_new_event_needs(
        client, auth, other_auth, settings):
    """Claims used to take the oldest due deliveries first: a store whose endpoints all hang filled
    the run's slots, and another store's new event waited for those attempts' deadline. Now
    stores take turns and one store holds at most a quarter of the slots (4 of 16 here)."""
    policy = delivery_policy.DeliveryPolicy(retry_schedule=(60,), timeout_seconds=10, claim_seconds=60,
                                             concurrency=16, allow_private=True, max_in_flight_per_endpoint=2)
    with Receiver() as hostile, Receiver() as fast:
        release = None
        for number in range(8):                 # 8 endpoints × 2 in flight = every slot
            release = hostile.hold(f"/hang-{number}")
            make_endpoint(client, auth, hostile.url(f"/hang-{number}"))
        for number in range(10):
            create_invoice(client, auth, external_order_id=f"backlog-{number}")
        make_endpoint(client, other_auth, fast.url("/fast"))
        invoice = create_invoice(client, other_auth, external_order_id="new")
        with db.connection_context():
            outbox.relay(now=utcnow(), grace=dt.timedelta(0))       # the backlog's rows are older
        run = threading.Thread(target=pump_once, args=(policy,), daemon=True)
        began = time.monotonic()
        run.start()
        try:
            [arrived] = fast.wait_for(1, path="/fast", timeout=5)
            assert invoice["id"].encode() in arrived.body and time.monotonic() - began < 5
            hostile.held.wait(5)
            assert len(hostile.requests) <= policy.caps.per_store == 4
            # Events committed while the run goes on are fanned out and sent at its next look, and
            # each result is recorded at once: unrecorded (waiting for half the slots to finish),
            # two of them held the endpoint's cap until the hanging attempts ended.
            for number in range(6):
                began = time.monotonic()
                invoice = create_invoice(client, other_auth, external_order_id=f"later-{number}")
                arrived = fast.wait_for(number + 2, path="/fast", timeout=5)
                assert invoice["id"].encode() in arrived[-1].body and time.monotonic() - began < 5
        finally:
            release.set()
            run.join(30)


def test_several_stores_with_hanging_endpoints_leave_slots_for_another_stores_new_event(client, auth):
    """Four stores whose receivers all hang, each at its cap (2 endpoints × 2), used to hold every
    slot of a run (4 × 4 of 16): another store's new event then waited for their attempts' 30 s
    deadline. Caps now shrink as the stores being served multiply (to 3 each here), so a quarter
    of the slots stays free for it, and it is claimed at the run's next look."""
    policy = delivery_policy.DeliveryPolicy(retry_schedule=(60,), timeout_seconds=30, claim_seconds=60,
                                            concurrency=16, allow_private=True, max_in_flight_per_endpoint=2)
    assert policy.all_stores == 12
    with Receiver() as hostile, Receiver() as quiet:
        release = None
        for store_number in range(4):
            headers = {"Authorization": f"Bearer {factories.make_key(factories.make_store(name=f'H{store_number}'))}"}
            for number in range(2):
                release = hostile.hold(f"/hang-{store_number}-{number}")
                make_endpoint(client, headers, hostile.url(f"/hang-{store_number}-{number}"))
            for number in range(3):             # 6 deliveries each, more than its cap
                create_invoice(client, headers, external_order_id=f"backlog-{number}")
        make_endpoint(client, auth, quiet.url("/quiet"))
        with db.connection_context():
            outbox.relay(now=utcnow(), grace=dt.timedelta(0))
        run = threading.Thread(target=pump_once, args=(policy,), daemon=True)
        run.start()
        try:
            hostile.wait_for(12, timeout=10)            # their attempts hang, holding their slots
            invoice = create_invoice(client, auth, external_order_id="new")
            [arrived] = quiet.wait_for(1, path="/quiet", timeout=10)     # long before the 30 s deadline
            assert invoice["id"].encode() in arrived.body
            assert len(hostile.requests) == 12, [request.path for request in hostile.requests]
        finally:
            release.set()
            run.join(30)


def pump_once(policy):
    with db.connection_context():
        webhook_delivery.deliver_due(policy, max_seconds=40)
