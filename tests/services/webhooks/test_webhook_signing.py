"""The documented test vector (docs/webhooks.md), checked against the code that signs."""
from services.webhooks.webhook_signing import signature, signature_header, verify

SECRET = "whsec_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
TIMESTAMP = 1780315200
BODY = (b'{"api_version":"1.0.0","created_at":"2026-06-01T12:00:00Z","data":{"object":{"id":'
        b'"inv_00000000000000000000000000000001","status":"paid"}},"id":"evt_00000000000000000000000000000001",'
        b'"type":"invoice.paid"}')
EXPECTED = "ca320f4e779f6bc900977245217618bfe0491581dcbed790f35c87e06a7c4f98"


def test_the_documented_vector():
    assert signature(SECRET, TIMESTAMP, BODY) == EXPECTED
    assert signature_header([SECRET], TIMESTAMP, BODY) == f"v1={EXPECTED}"


def test_verify_refuses_a_changed_body_a_stale_timestamp_and_a_wrong_secret():
    header = signature_header(["whsec_other", SECRET], TIMESTAMP, BODY)
    assert verify(SECRET, header, TIMESTAMP, BODY, now=TIMESTAMP + 300)
    assert not verify(SECRET, header, TIMESTAMP, BODY, now=TIMESTAMP + 301)
    assert not verify(SECRET, header, TIMESTAMP, BODY + b" ", now=TIMESTAMP)
    assert not verify(SECRET, header, TIMESTAMP + 1, BODY, now=TIMESTAMP)
    assert not verify("whsec_wrong", header, TIMESTAMP, BODY, now=TIMESTAMP)
