"""kit/tender_receiver.py on its own: the signature recipe (a fixed vector, and agreement with the
server's signer), every refusal, and the seen-stores' once-only claim."""
from concurrent.futures import ThreadPoolExecutor
import json
from pathlib import Path
import threading

import pytest

from kit.tender_receiver import MemorySeenStore, Receiver, Rejected, SQLiteSeenStore, sign, verify
from services.webhooks import webhook_signing

SECRET = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
INTEGRATION = "int_0123456789abcdef0123456789abcdef"
TIMESTAMP = 1780315200
BODY = (b'{"api_version":"1.0.0","created_at":"2026-06-01T12:00:00Z","data":{"object":{"external_order_id":"1001",'
        b'"id":"inv_00000000000000000000000000000001","status":"paid"}},'
        b'"id":"evt_00000000000000000000000000000001","type":"invoice.paid"}')
EXPECTED = "0e7ac3af96a81afe85b898eb64f2027f54d6705531bead79171c7317f1b3f62b"   # openssl dgst -sha256 -hmac


EVENT_ID = "evt_00000000000000000000000000000001"


def headers(*, signature=None, timestamp=TIMESTAMP, integration=INTEGRATION, event_id=EVENT_ID):
    return {"x-tender-signature": f"v1={sign(SECRET, timestamp, BODY)}" if signature is None else signature,
            "X-Tender-Timestamp": str(timestamp), "X-Tender-Integration-Id": integration,
            "X-Tender-Event-Id": event_id}


def test_the_documented_vector_and_the_server_agree():
    assert sign(SECRET, TIMESTAMP, BODY) == EXPECTED == webhook_signing.signature(SECRET, TIMESTAMP, BODY)
    header = webhook_signing.signature_header([SECRET], TIMESTAMP, BODY)
    assert verify(headers(signature=header), BODY, secret=SECRET, integration_id=INTEGRATION,
                  now=TIMESTAMP)["type"] == "invoice.paid"


def test_either_v1_value_may_match():
    other = "f" * 64
    both = webhook_signing.signature_header([other, SECRET], TIMESTAMP, BODY)
    assert verify(headers(signature=both), BODY, secret=SECRET, integration_id=INTEGRATION, now=TIMESTAMP)
    assert verify(headers(signature=both), BODY, secret=other, integration_id=INTEGRATION, now=TIMESTAMP)


@pytest.mark.parametrize("change, status, reason", [
    (dict(signature="v1=" + "0" * 64), 401, "signature"),
    (dict(signature="v0=" + EXPECTED), 401, "signature"),
    (dict(signature=""), 401, "signature"),
    (dict(integration="int_ffffffffffffffffffffffffffffffff"), 403, "Integration-Id"),
    (dict(integration=""), 403, "Integration-Id"),
    (dict(event_id="evt_other"), 400, "Event-Id"),
])
def test_refusals(change, status, reason):
    with pytest.raises(Rejected) as refused:
        verify(headers(**change), BODY, secret=SECRET, integration_id=INTEGRATION, now=TIMESTAMP)
    assert refused.value.status == status and reason in refused.value.reason


def test_timestamp_tolerance_is_300_seconds_both_ways():
    for now in (TIMESTAMP + 300, TIMESTAMP - 300):
        assert verify(headers(), BODY, secret=SECRET, integration_id=INTEGRATION, now=now)
    for now in (TIMESTAMP + 301, TIMESTAMP - 301):
        with pytest.raises(Rejected, match="timestamp"):
            verify(headers(), BODY, secret=SECRET, integration_id=INTEGRATION, now=now)
    with pytest.raises(Rejected, match="Timestamp"):
        verify({**headers(), "X-Tender-Timestamp": "soon"}, BODY, secret=SECRET, integration_id=INTEGRATION,
               now=TIMESTAMP)


def test_a_body_changed_by_one_byte_is_refused():
    with pytest.raises(Rejected, match="signature"):
        verify(headers(), BODY.replace(b"1001", b"1002"), secret=SECRET, integration_id=INTEGRATION, now=TIMESTAMP)


@pytest.fixture(params=["memory", "sqlite"])
def seen(request, tmp_path):
    return MemorySeenStore() if request.param == "memory" else SQLiteSeenStore(str(tmp_path / "seen.db"))


def test_the_action_runs_once_per_event_id(seen):
    acted = []
    receiver = Receiver(secret=SECRET, integration_id=INTEGRATION, on_event=acted.append, seen=seen,
                        clock=lambda: TIMESTAMP)
    assert receiver.handle(headers(), BODY) == (200, {"received": True})
    assert receiver.handle(headers(), BODY) == (200, {"duplicate": True})
    assert [event["id"] for event in acted] == ["evt_00000000000000000000000000000001"]
    assert receiver.handle(headers(signature="v1=" + "0" * 64), BODY)[0] == 401


def test_a_failed_action_is_retried_not_lost(seen):
    calls = []

    def flaky(event):
        calls.append(event["id"])
        if len(calls) == 1:
            raise RuntimeError("database down")

    receiver = Receiver(secret=SECRET, integration_id=INTEGRATION, on_event=flaky, seen=seen, clock=lambda: TIMESTAMP)
    assert receiver.handle(headers(), BODY)[0] == 500
    assert receiver.handle(headers(), BODY) == (200, {"received": True})
    assert receiver.handle(headers(), BODY) == (200, {"duplicate": True})
    assert len(calls) == 2


def test_concurrent_claims_of_one_id_let_exactly_one_through(seen, tmp_path):
    # SQLite: separate store objects (as separate PHP/Python processes would have) on one file.
    stores = [seen] * 8 if isinstance(seen, MemorySeenStore) else [SQLiteSeenStore(str(tmp_path / "seen.db"))
                                                                   for _ in range(8)]
    start = threading.Barrier(8)

    def claim(store):
        start.wait()
        return store.claim("evt_same")

    with ThreadPoolExecutor(8) as pool:
        assert sorted(pool.map(claim, stores)) == [False] * 7 + [True]


def test_the_sqlite_store_survives_a_restart(tmp_path):
    path = str(tmp_path / "seen.db")
    assert SQLiteSeenStore(path).claim("evt_1") is True
    assert SQLiteSeenStore(path).claim("evt_1") is False


def test_the_kit_uses_the_standard_library_only():
    import ast
    import sys

    import kit.tender_receiver as module

    tree = ast.parse(open(module.__file__).read())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported
    assert json.loads(BODY)["id"].startswith("evt_")


VECTORS = json.loads((Path(__file__).resolve().parents[2] / "kit" / "tender_receiver_vectors.json").read_text())


@pytest.mark.parametrize("case", VECTORS["cases"], ids=[case["name"] for case in VECTORS["cases"]])
def test_the_shared_vectors(case):
    """kit/tender_receiver_vectors.json: the WooCommerce plugin's PHPUnit suite runs the same cases."""
    assert VECTORS["expected_signature"] == f"v1={EXPECTED}"
    try:
        event = verify(case["headers"], case["body"].encode(), secret=VECTORS["webhook_secret"],
                       integration_id=VECTORS["integration_id"], now=case["now"])
    except Rejected as refused:
        assert (refused.status, refused.reason) == (case["status"], case["reason"])
    else:
        assert case["status"] == 200 and event["id"] == case["headers"].get("X-Tender-Event-Id",
                                                                            case["headers"].get("x-tender-event-id"))
