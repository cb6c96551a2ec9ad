"""The receiver torture suite: real local servers failing the ways merchants' servers do. For each
failure, on an endpoint and on an invoice's legacy `callback_url`: the attempt is recorded with a
readable reason and retried on the schedule, and a healthy endpoint of the same store gets the
event exactly once, its delivery `succeeded` after one attempt (docs/webhooks.md)."""
import dataclasses
import datetime as dt

import pytest

from core.clock import utcnow
from models.base import db
from models.webhooks import WebhookAttempt, WebhookDelivery
from services.webhooks import delivery_policy
from tests import factories
from tests.services.webhooks.conftest import pump
from tests.services.webhooks.test_delivery import create_invoice, make_endpoint
from tests.support.receiver import Receiver
from tests.support.tls_certificates import LocalCA, self_signed_server

RETRY_SECONDS = 60
TEN_MB = 10 * 1024 * 1024


def _plain_http_behind_https(tmp_path, ca):
    receiver = Receiver()
    return receiver, receiver.url("/hook", scheme="https")


def _self_signed(tmp_path, ca):
    receiver = Receiver(tls=self_signed_server(tmp_path))
    return receiver, receiver.url("/hook")


def _expired(tmp_path, ca):
    receiver = Receiver(tls=ca.server("localhost", expired=True))
    return receiver, receiver.url("/hook", host="localhost")


def _wrong_host(tmp_path, ca):
    receiver = Receiver(tls=ca.server("shop.example"))
    return receiver, receiver.url("/hook", host="localhost")


def _scripted(*answers):
    def make(tmp_path, ca):
        receiver = Receiver()
        receiver.script("/hook", list(answers))
        return receiver, receiver.url("/hook")
    return make


def _broken(how):
    def make(tmp_path, ca):
        receiver = Receiver()
        receiver.break_off("/hook", how)
        return receiver, receiver.url("/hook")
    return make


def _trickle(tmp_path, ca):
    receiver = Receiver()
    receiver.trickle("/hook", phase="body", every=0.1)
    return receiver, receiver.url("/hook")


FAILURES = {
    "plain http behind https": (_plain_http_behind_https, "tls: wrong version number (is this an http:// server?)"),
    "self-signed certificate": (_self_signed, "tls: certificate verify failed (self-signed certificate)"),
    "expired certificate": (_expired, "tls: certificate verify failed (certificate has expired)"),
    "wrong-host certificate": (_wrong_host, "tls: certificate verify failed (Hostname mismatch, certificate "
                                            "is not valid for 'localhost'.)"),
    "reset after the headers": (_broken("reset_after_headers"), "connection reset"),
    "close before the status line": (_broken("close_before_status"), "connection closed before the status line"),
    "redirect": (_scripted((302, "moved", {"Location": "https://shop.example/new"})),
                 "redirects are not followed (HTTP 302 to https://shop.example/new)"),
    "410 gone": (_scripted(410), "HTTP 410"),
    "5xx with a 10 MB body": (_scripted((503, "x" * TEN_MB, {})), "HTTP 503"),
    "a 200 whose body holds NUL bytes": (_scripted((200, "ok\x00\x00", {})), None),
    "trickle": (_trickle, "timeout: no complete answer within 2 s"),
}


@pytest.fixture
def ca(tmp_path):
    return LocalCA(tmp_path)


@pytest.fixture
def torture_policy(ca):
    """The real retry schedule's first step, a short deadline (the trickle), and the test CA."""
    return delivery_policy.DeliveryPolicy(retry_schedule=(RETRY_SECONDS, 300), timeout_seconds=2, claim_seconds=30,
                                           concurrency=4, allow_private=True, ca_bundle=ca.bundle)


def _rows():
    with db.connection_context():
        return {row.target_key: row for row in WebhookDelivery.select()}


def _attempts(delivery_id):
    with db.connection_context():
        return list(WebhookAttempt.select().where(WebhookAttempt.delivery == delivery_id)
                    .order_by(WebhookAttempt.number))


@pytest.mark.parametrize("target", ["endpoint", "callback_url"])
@pytest.mark.parametrize("failure", list(FAILURES))
def test_a_failing_receiver_is_recorded_and_retried_and_costs_the_healthy_one_nothing(
        client, store, auth, ca, torture_policy, tmp_path, failure, target):
    make_receiver, reason = FAILURES[failure]
    bad, bad_url = make_receiver(tmp_path, ca)
    with bad, Receiver() as healthy:
        healthy_endpoint = make_endpoint(client, auth, healthy.url("/healthy"))
        if target == "endpoint":
            bad_key = make_endpoint(client, auth, bad_url)["id"]
            invoice = create_invoice(client, auth)
        else:
            bad_key = "callback_url"     # (factories: the route takes https:// callbacks only)
            invoice = {"id": factories.make_invoice(store, callback_url=bad_url).public_id}
        began = utcnow()
        counts = pump(torture_policy)

        [arrived] = healthy.wait_for(1, path="/healthy")
        assert invoice["id"].encode() in arrived.body
        rows = _rows()
        good, broken = rows[healthy_endpoint["id"]], rows[bad_key]
        assert (good.status, good.attempts, good.claim_token) == ("succeeded", 1, None)
        assert [a.outcome for a in _attempts(good.id)] == ["succeeded"]
        [attempt] = _attempts(broken.id)
        assert broken.attempts == 1 and broken.claim_token is None
        if reason is None:          # the NUL bytes: an ordinary success, its excerpt recorded
            assert broken.status == "succeeded" and attempt.outcome == "succeeded"
            assert broken.last_response_excerpt.startswith("ok")
            return
        assert counts.failed_attempts == 1, [o.error for o in counts.outcomes]
        assert attempt.outcome == "failed" and attempt.error == reason and broken.last_error == reason
        if failure == "410 gone" and target == "endpoint":      # the endpoint is disabled at once
            shown = client.get(f"/v1/webhook-endpoints/{bad_key}", headers=auth).json
            assert shown["enabled"] is False and "410" in shown["disabled_reason"]
            return
        assert broken.status == "pending"
        retry_in = (broken.next_attempt_at - began).total_seconds()
        assert RETRY_SECONDS - 1 <= retry_in <= RETRY_SECONDS * 1.1 + 5, retry_in

        # At the retry time the failing one is tried again; the healthy one is never sent twice.
        later = broken.next_attempt_at + dt.timedelta(seconds=1)
        pump(dataclasses.replace(torture_policy, timeout_seconds=2), now=lambda: later)
        assert [a.number for a in _attempts(broken.id)] == [1, 2]
        assert len(healthy.to("/healthy")) == 1 and len(_attempts(good.id)) == 1
