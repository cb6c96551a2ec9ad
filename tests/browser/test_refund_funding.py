"""The merchant's refund funding page in Chromium (tests/browser/conftest.py): what to send, where,
with a QR code and a countdown; the status follows the real refund poller to the end."""
from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import PHONE, wait_for

TIMEOUT_MS = 20_000


def _settled_invoice(server) -> dict:
    invoice = server.api("POST", "/v1/invoices", json={"amount": "25.00"}).json()
    assert server.api("POST", f"/v1/test_helpers/invoices/{invoice['id']}/pay", json={}).status_code == 202

    def settled():
        body = server.api("GET", f"/v1/invoices/{invoice['id']}/status").json()
        return body["status"] == "paid" and body["received_amount"] is not None

    wait_for(settled, timeout=30, what="the sandbox payment to settle")
    return invoice


def test_the_funding_page_shows_what_to_send_and_follows_the_refund(server, pages):
    invoice = _settled_invoice(server)
    created = server.api("POST", f"/v1/invoices/{invoice['id']}/refunds",
                         json={"amount": "10.00", "reason": "a private note"})
    assert created.status_code == 201, created.text
    refund = created.json()

    page = pages.open(refund["funding_url"])
    assert page.response.status == 200
    expect(page.locator(".amount")).to_contain_text("10.00 USD")
    panel = page.locator("[data-panel=awaiting_funds]")
    expect(panel.locator("[data-field=funding_amount]")).to_have_text("10.00")
    expect(panel).to_contain_text("usdc.near")
    expect(panel.locator("[data-field=deposit_address]")).to_have_text(refund["funding"]["deposit_address"])
    expect(page.locator("img.qr")).to_have_js_property("complete", True)
    assert page.locator("img.qr").evaluate("img => img.naturalWidth") > 0           # the QR code loaded
    expect(page.locator("[data-field=countdown]")).to_have_text(re.compile(r"^(59|60):\d\d$"))
    expect(page.locator("body")).not_to_contain_text("a private note")             # the reason stays private
    expect(page.locator("body")).not_to_contain_text(refund["refund_to"])          # so does the buyer's address
    pages.assert_accessible(page, "refund awaiting funds")
    pages.screenshot(page, "refund-funding")

    funded = server.api("POST", f"/v1/test_helpers/refunds/{refund['id']}/fund", json={})
    assert funded.status_code == 202, funded.text
    expect(page.get_by_role("heading", name="Refund sent")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator("[data-show=timer]").first).to_be_hidden()
    assert server.api("GET", f"/v1/invoices/{invoice['id']}").json()["refunded_amount"] == "10.00"
    pages.assert_accessible(page, "refund sent")
    assert not pages.console_errors, pages.console_errors


def test_a_failed_refund_says_the_funds_come_back(server, pages):
    invoice = _settled_invoice(server)
    refund = server.api("POST", f"/v1/invoices/{invoice['id']}/refunds", json={"amount": "5.00"}).json()
    page = pages.open(refund["funding_url"], viewport=PHONE)
    expect(page.locator("[data-field=deposit_address]")).to_be_visible()
    server.api("POST", f"/v1/test_helpers/refunds/{refund['id']}/fund", json={"outcome": "failed"})
    expect(page.get_by_role("heading", name="Refund failed")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator("[data-panel=failed]")).to_contain_text("sent back to your payout wallet")
    assert not pages.console_errors, pages.console_errors
