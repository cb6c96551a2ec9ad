"""Templates and headers: both parts from one template, every value escaped in HTML, and no way to
inject a header through any value."""
import datetime as dt

import pytest

from services.mail import compose

HOSTILE = "Shop <script>alert(1)</script> & co\r\nBcc: everyone@example.com"


def _message(subject="Hello", recipient="ann@example.com", message_id="<m1@tender.test>"):
    return compose.message(sender="Tender <mail@tender.test>", recipient=recipient, subject=subject, text="hi",
                           html="<p>hi</p>", message_id=message_id, date=dt.datetime(2026, 1, 1))


@pytest.mark.parametrize("kind", compose.kinds())
def test_every_kind_escapes_every_value_and_keeps_headers_whole(kind):
    values = {name: HOSTILE for name in (
        "store_name", "invoice_id", "amount", "currency", "paid_amount", "external_order_id", "transaction_hash",
        "paid_at", "expires_at", "refund_id", "asset", "amount_out", "refund_to", "failure_reason", "funding_amount",
        "funding_asset", "deposit_address", "deposit_memo", "funding_url", "endpoint_id", "endpoint_host",
        "failing_since", "last_error", "reason", "url", "role")}
    values["money"] = [(HOSTILE, HOSTILE)]          # an invoice's money lines (core/money.invoice_money_lines)
    subject, text, html = compose.render(kind, values)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "\n" not in subject and "\r" not in subject
    raw = _message(subject=subject).as_bytes()
    headers = raw.split(b"\r\n\r\n", 1)[0]
    assert b"\r\nBcc:" not in headers and b"\nBcc:" not in headers
    assert "Shop <script>" in text             # plain text is not HTML: shown as typed, on its own lines


@pytest.mark.parametrize("field", ["recipient", "message_id"])
def test_a_line_break_in_a_header_value_is_refused(field):
    with pytest.raises(ValueError):
        _message(**{field: "ann@example.com\r\nBcc: everyone@example.com"})


def test_the_headers_every_mail_carries_and_the_same_bytes_every_time():
    first, again = _message().as_bytes(), _message().as_bytes()
    assert first == again
    message = _message()
    assert message["Auto-Submitted"] == "auto-generated" and message["Message-ID"] == "<m1@tender.test>"
    assert message["Date"] == "Thu, 01 Jan 2026 00:00:00 +0000"
    assert [part.get_content_type() for part in message.iter_parts()] == ["text/plain", "text/html"]
