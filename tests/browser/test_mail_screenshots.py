"""Every kind of mail's HTML part in Chromium, saved as docs/email.md shows it (docs/screenshots/mail-*.png
with SCREENSHOTS=docs), so the pictures follow the templates.

The mail of payments and refunds is the real thing: the live server (tests/browser/conftest.py)
is paid and refunds in the sandbox, and each mail is read from its outbox as it would be sent.
What only time or the dashboard brings about (a funding reminder, an endpoint failing or disabled,
an invitation, a password reset) is rendered here from the same templates, the reminder from
the live refund as the API gives it."""
from __future__ import annotations

import pytest

from services.mail import compose, notices
from tests.browser.conftest import wait_for

MAIL_VIEWPORT = {"width": 680, "height": 620}
MERCHANT, BUYER = "orders@lumen-coffee.example", "ann@example.com"
STORE_NAME = "Lumen Coffee"          # the store the browser tests' server creates
FROM_THE_SERVER = ("payment_received", "receipt", "invoice_underpaid", "refund_awaiting_funds", "refund_succeeded",
                   "refund_sent", "refund_failed")
RENDERED_HERE = {
    "endpoint_failing": {"store_name": STORE_NAME, "endpoint_id": "we_4f1c2b9e0d7a4c3f8e2a1b6d5c9f0e7a",
                         "endpoint_host": "hooks.lumen-coffee.example", "failing_since": "2026-11-27T09:12:44Z",
                         "last_error": "HTTP 503 Service Unavailable"},
    "endpoint_disabled": {"store_name": STORE_NAME, "endpoint_id": "we_4f1c2b9e0d7a4c3f8e2a1b6d5c9f0e7a",
                          "endpoint_host": "hooks.lumen-coffee.example",
                          "reason": "every delivery failed for 3 days"},
    "invitation": {"store_name": STORE_NAME, "role": "developer", "expires_at": "2026-11-30T12:00:00Z",
                   "url": "https://pay.lumen-coffee.example/dashboard/invitations/3c8e0f-example"},
    "password_reset": {"store_name": STORE_NAME, "expires_at": "2026-11-27T13:00:00Z",
                       "url": "https://pay.lumen-coffee.example/dashboard/reset/9a41d2-example"},
}


def _paid(server, **payment) -> dict:
    created = server.api("POST", "/v1/invoices", json={"amount": "42.50", "external_order_id": "order-1042",
                                                       "customer_email": BUYER})
    assert created.status_code == 201, created.text
    invoice = created.json()
    assert server.api("POST", f"/v1/test_helpers/invoices/{invoice['id']}/pay", json=payment).status_code == 202
    return invoice


def _settled(server, invoice) -> None:
    def settled():
        body = server.api("GET", f"/v1/invoices/{invoice['id']}/status").json()
        return body["status"] == "paid" and body["received_amount"] is not None
    wait_for(settled, timeout=40, what="the sandbox payment to settle")


def _refund(server, invoice, amount: str, outcome: str, ending: str) -> dict:
    created = server.api("POST", f"/v1/invoices/{invoice['id']}/refunds", json={"amount": amount})
    assert created.status_code == 201, created.text
    refund = created.json()
    funded = server.api("POST", f"/v1/test_helpers/refunds/{refund['id']}/fund", json={"outcome": outcome})
    assert funded.status_code == 202, funded.text
    wait_for(lambda: server.api("GET", f"/v1/refunds/{refund['id']}").json()["status"] == ending, timeout=40,
             what=f"the refund to end {ending}")
    return refund


def _outbox(server) -> dict[str, str]:
    """The newest HTML part of each kind of mail the server queued to this test's addresses."""
    rows = server.rows("SELECT kind, html_body FROM mail WHERE recipient IN (?, ?) ORDER BY created_at",
                       (MERCHANT, BUYER))
    return {kind: html for kind, html in rows}


def _screenshot(pages, kind: str, html: str) -> None:
    context = pages.browser.new_context(viewport=MAIL_VIEWPORT, device_scale_factor=1)
    pages.contexts.append(context)
    page = context.new_page()
    page.set_content(html)
    assert page.locator("body").inner_text().strip()
    pages.screenshot(page, f"mail-{kind}")


@pytest.fixture(scope="module")
def mail_from_the_server(server) -> tuple[dict[str, str], dict]:
    """Each payment and refund mail of one walk through the sandbox, and the refund still awaiting funds."""
    chosen = server.api("PATCH", "/v1/store/notifications", json={"recipients": [MERCHANT]})
    assert chosen.status_code == 200, chosen.text
    paid = _paid(server)
    _paid(server, outcome="underpaid")
    _settled(server, paid)
    _refund(server, paid, "10.00", "success", "succeeded")
    _refund(server, paid, "5.00", "failed", "failed")
    waiting = server.api("POST", f"/v1/invoices/{paid['id']}/refunds", json={"amount": "2.50"})
    assert waiting.status_code == 201, waiting.text
    outbox = wait_for(lambda: (lambda found: found if set(FROM_THE_SERVER) <= set(found) else None)(_outbox(server)),
                      timeout=40, what="every payment and refund mail in the outbox")
    return outbox, waiting.json()


def test_every_kind_of_mail_has_a_screenshot_source():
    assert sorted(FROM_THE_SERVER + ("refund_funding_reminder",) + tuple(RENDERED_HERE)) == sorted(compose.kinds())


@pytest.mark.parametrize("kind", FROM_THE_SERVER)
def test_the_mail_of_payments_and_refunds_as_sent(mail_from_the_server, pages, kind):
    outbox, _waiting = mail_from_the_server
    _screenshot(pages, kind, outbox[kind])


@pytest.mark.parametrize("kind", ("refund_funding_reminder",) + tuple(RENDERED_HERE))
def test_the_mail_of_time_and_the_dashboard(mail_from_the_server, pages, kind):
    _outbox, waiting = mail_from_the_server
    context = notices.reminder_context(STORE_NAME, waiting) if kind == "refund_funding_reminder" else \
        RENDERED_HERE[kind]
    _subject, _text, html = compose.render(kind, context)
    _screenshot(pages, kind, html)
