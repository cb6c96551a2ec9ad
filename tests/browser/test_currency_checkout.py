"""A checkout in euros in Chromium (tests/browser/conftest.py): the rate is an estimate while the buyer
chooses, fixed once they take a deposit address, and stays fixed when the operator's rate moves;
without a rate the page says payment is briefly unavailable."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import wait_for

EVM_ADDRESS = "0x" + "3f" * 20
TIMEOUT_MS = 20_000


def _set_eur(server, rate: str | None) -> None:
    server.sql("DELETE FROM exchange_rate WHERE source = 'sandbox' AND currency = 'EUR'", ())
    if rate is not None:
        server.sql("INSERT INTO exchange_rate (source, currency, rate, as_of, fetched_at) "
                   "VALUES ('sandbox', 'EUR', ?, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)", (rate,))


def _eur_invoice(server) -> dict:
    response = server.api("POST", "/v1/invoices", json={"amount": "100.00", "currency": "EUR"})
    assert response.status_code == 201, response.text
    return response.json()


def test_a_eur_checkout_shows_its_estimate_then_its_fixed_rate(server, pages):
    _set_eur(server, "1.08")
    invoice = _eur_invoice(server)
    page = pages.open(invoice["checkout_url"])
    expect(page.locator(".amount")).to_contain_text("100.00 EUR")
    rate = page.locator("[data-field=rate]")
    expect(rate).to_be_hidden()
    page.select_option("#asset", "usdc.eth")
    expect(rate).to_have_text("Estimated rate (fixed when you get your address): 1 EUR = 1.080 USD")
    expect(page.locator("[data-field=estimate]")).to_contain_text("You will send about 108.54 USDC")
    pages.assert_accessible(page, "euro checkout with an estimated rate")

    page.fill("#refund-to", EVM_ADDRESS)
    page.click("#choose-submit")
    expect(page.locator("[data-panel=pay] [data-field=amount_due]")).to_have_text("108.54", timeout=TIMEOUT_MS)
    expect(rate).to_have_text("Rate fixed: 1 EUR = 1.080 USD")
    pages.screenshot(page, "checkout-eur-fixed-rate")

    _set_eur(server, "1.20")                     # the operator's rate moves after the commit
    again = pages.open(invoice["checkout_url"])
    expect(again.locator("[data-field=rate]")).to_have_text("Rate fixed: 1 EUR = 1.080 USD")
    expect(again.locator("[data-panel=pay] [data-field=amount_due]")).to_have_text("108.54")
    fixed = server.api("GET", f"/v1/invoices/{invoice['id']}").json()
    assert (fixed["exchange_rate"]["rate"], fixed["payout_amount"]) == ("1.080", "108.00")
    assert not pages.console_errors, pages.console_errors


def test_without_a_rate_the_checkout_says_payment_is_briefly_unavailable(server, pages):
    _set_eur(server, None)
    try:
        invoice = _eur_invoice(server)
        page = pages.open(invoice["checkout_url"])
        page.select_option("#asset", "usdc.eth")
        expect(page.locator("[data-field=estimate-error]")).to_contain_text("briefly unavailable")
        expect(page.locator("[data-field=rate]")).to_be_hidden()
        wait_for(lambda: server.api("GET", "/health").json()["components"]["exchange_rates"] == "degraded",
                 timeout=5, what="/health to show the missing rate")
    finally:
        _set_eur(server, "1.0842")
