"""The optional receipt e-mail of the hosted pages (docs/email.md): typed on the payment-link page or
on the checkout page, it reaches the invoice, and a bad one is refused with the server's reason."""
from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.test_hosted_pages import EVM_ADDRESS, TIMEOUT_MS

EMAIL_OF = "SELECT customer_email FROM invoice WHERE public_id = ?"


def test_a_buyer_gives_a_receipt_address_on_either_page(server, pages):
    link = server.api("POST", "/v1/payment-links", json={
        "title": "Beans, 1 kg", "amount_mode": "fixed_amount", "amount": "18.00"}).json()
    page = pages.open(link["public_url"])
    expect(page.locator("#asset")).to_be_enabled()
    page.select_option("#asset", "usdc.base")
    page.fill("#refund-to", EVM_ADDRESS)
    page.fill("#customer-email", "linked@example.com")
    pages.assert_accessible(page, "payment link with a receipt address")
    page.click("#pay-submit")
    page.wait_for_url(re.compile(r"/checkout/inv_[0-9a-f]{32}$"), timeout=TIMEOUT_MS)
    assert server.one(EMAIL_OF, (page.url.rsplit("/", 1)[1],)) == "linked@example.com"

    invoice = server.api("POST", "/v1/invoices", json={"amount": "25.00"}).json()
    page = pages.open(invoice["checkout_url"])
    expect(page.locator("#asset")).to_be_enabled()
    page.select_option("#asset", "usdc.eth")
    page.fill("#refund-to", EVM_ADDRESS)
    page.fill("#customer-email", "not an address")
    page.click("#choose-submit")
    expect(page.locator("[data-field=choose-error]")).to_contain_text("customer_email")
    page.fill("#customer-email", "me@example.com")
    page.click("#choose-submit")
    expect(page.locator("[data-panel=pay] [data-field=deposit_address]")).to_have_text(
        re.compile(r"^0x[0-9a-f]{40}$"), timeout=TIMEOUT_MS)
    assert server.one(EMAIL_OF, (invoice["id"],)) == "me@example.com"
    assert not pages.console_errors, pages.console_errors
