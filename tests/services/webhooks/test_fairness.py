"""No tenant stalls another (docs/webhooks.md#fairness): one store's endpoint trickles bytes with a
backlog of 50 events; another store's endpoint still gets each new event within 5 s. The jobs run
as the embedded default runs them (a worker and the scheduler in threads, on this run's Redis)."""
import dataclasses
import time

import jobs
from scheduler import embedded
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
