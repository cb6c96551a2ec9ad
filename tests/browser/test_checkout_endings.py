"""Every ending of a payment as the buyer sees it in Chromium (tests/browser/conftest.py): the sandbox
drives each one through the ordinary polling jobs, and the page must say what happened to the
money and what the buyer can do next. Also: a new status reaches the page within 2 s of the move."""
from __future__ import annotations

import datetime as dt
import re

from playwright.sync_api import expect

from tests.browser.conftest import PHONE, wait_for

EVM_ADDRESS = "0x" + "5e" * 20
EVM_SHOWN = EVM_ADDRESS[:6] + "…" + EVM_ADDRESS[-4:]      # the buyer views shorten addresses
TIMEOUT_MS = 20_000


def _awaiting_payment(server, **body) -> dict:
    """An invoice whose buyer has chosen USDC on Ethereum and a refund address: 25.125 USDC due."""
    created = server.api("POST", "/v1/invoices", json={"amount": "25.00", **body})
    assert created.status_code == 201, created.text
    invoice = created.json()
    quoted = server.api("POST", f"/v1/public/invoices/{invoice['id']}/quote",
                        json={"origin_asset": "usdc.eth", "refund_to": EVM_ADDRESS, "dry": False})
    assert quoted.status_code == 200, quoted.text
    return {**invoice, **quoted.json()["invoice"]}


def _pay(server, invoice_id: str, **body) -> None:
    response = server.api("POST", f"/v1/test_helpers/invoices/{invoice_id}/pay", json=body)
    assert response.status_code == 202, response.text


def _status(server, invoice_id: str) -> str:
    return server.api("GET", f"/v1/invoices/{invoice_id}").json()["status"]


def _simulated(server, pages, outcome: str, **body):
    """(invoice, its checkout page) after the buyer chose `outcome` and clicked "Simulate payment"."""
    invoice = _awaiting_payment(server, **body)
    page = pages.open(invoice["checkout_url"])
    expect(page.locator("[data-panel=pay] [data-field=deposit_address]")).to_have_text(re.compile(r"^0x"))
    page.select_option("#outcome", outcome)
    page.click("#simulate")
    return invoice, page


def _refund_box(page):
    return page.locator("[data-field=refund-box]")


def test_underpaid_says_what_is_missing_and_what_happens_next(server, pages):
    invoice, page = _simulated(server, pages, "underpaid", return_url=f"{server.base_url}/health")

    expect(page.get_by_role("heading", name="Payment incomplete")).to_be_visible(timeout=TIMEOUT_MS)
    panel = page.locator("[data-panel=underpaid]")
    # The sandbox's underpayment is half the amount due: 12.5625 of 25.125 USDC.
    expect(panel).to_contain_text("We received 12.5625 USDC on Ethereum of the 25.125 due.")
    expect(panel).to_contain_text("12.5625 USDC on Ethereum is missing.")
    expect(panel).to_contain_text("send the missing amount to the same address before the time runs out")
    expect(panel.locator("code[data-field=amount_remaining]")).to_have_text("12.5625")
    expect(panel.locator("code[data-field=deposit_address]")).to_have_text(invoice["deposit_address"])
    expect(page.locator(".timer")).to_be_visible()                   # the time left to top it up
    expect(_refund_box(page)).to_contain_text(EVM_SHOWN)          # where it goes back otherwise
    expect(page.locator("[data-field=refund-done]")).to_be_hidden()  # nothing refunded yet
    expect(page.locator("#return-link")).to_be_visible()
    expect(page.locator("[data-field=announce]")).to_contain_text("Payment incomplete")
    pages.assert_accessible(page, "checkout underpaid")
    pages.screenshot(page, "checkout-underpaid-desktop")
    pages.assert_keyboard_reachable(page, "checkout underpaid")
    phone = pages.open(invoice["checkout_url"], viewport=PHONE)
    expect(phone.locator("[data-panel=underpaid]")).to_contain_text("12.5625 USDC on Ethereum is missing.")
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    pages.assert_accessible(phone, "checkout underpaid, phone width")
    assert not pages.console_errors, pages.console_errors


def test_refunded_says_where_the_money_went(server, pages):
    invoice, page = _simulated(server, pages, "refunded")

    expect(page.get_by_role("heading", name="Payment refunded")).to_be_visible(timeout=TIMEOUT_MS)
    refund = _refund_box(page)
    expect(refund).to_contain_text("Sent back to you: 25.125 USDC on Ethereum")
    expect(refund.locator("[data-field=refund_address]")).to_have_text(EVM_SHOWN)
    transactions = server.api("GET", f"/v1/invoices/{invoice['id']}/transactions").json()["data"]
    refund_hash = next(t["transaction_hash"] for t in transactions if t["type"] == "refund")
    expect(refund.locator("[data-field=refund_hash]")).to_have_text(refund_hash)
    pages.assert_accessible(page, "checkout refunded")
    phone = pages.open(invoice["checkout_url"], viewport=PHONE)
    expect(phone.locator("[data-field=refund_hash]")).to_have_text(refund_hash)
    pages.assert_accessible(phone, "checkout refunded, phone width")
    pages.screenshot(phone, "checkout-refunded-phone")
    assert not pages.console_errors, pages.console_errors


def test_failed_says_so_and_where_funds_go_back(server, pages):
    invoice, page = _simulated(server, pages, "failed", return_url=f"{server.base_url}/health")

    expect(page.get_by_role("heading", name="Payment failed")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator("[data-panel=failed]")).to_contain_text("returned to your refund address")
    expect(_refund_box(page).locator("[data-field=refund_address]")).to_have_text(EVM_SHOWN)
    expect(page.locator("#return-link")).to_be_visible()
    expect(page.locator("[data-field=redirect-note]")).to_be_hidden()   # it was briefly paid: no return now
    pages.assert_accessible(page, "checkout failed")
    assert not pages.console_errors, pages.console_errors


def test_late_payments_after_expiry(server, pages):
    """Sent after the provider's deadline: refunded, the invoice stays expired. Sent in time but
    seen after expiry: the expired invoice is paid. Either way the open page shows it."""
    refunded, paid = _awaiting_payment(server), _awaiting_payment(server)
    # A minute ago: still inside the window in which an expired invoice's address is watched.
    a_minute_ago = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=1)).strftime("%Y-%m-%d %H:%M:%S")
    for invoice in (refunded, paid):
        server.sql("UPDATE invoice SET expires_at = ? WHERE public_id = ?", (a_minute_ago, invoice["id"]))
    server.sql("UPDATE sandbox_deposit SET deadline = ? WHERE deposit_address = ?",
               (a_minute_ago, refunded["deposit_address"]))
    for invoice in (refunded, paid):
        wait_for(lambda: _status(server, invoice["id"]) == "expired", timeout=15, what="the expiry sweep")
    late_page, in_time_page = pages.open(refunded["checkout_url"]), pages.open(paid["checkout_url"])
    expect(late_page.get_by_role("heading", name="This invoice has expired")).to_be_visible()
    expect(late_page.locator("[data-panel=expired] [data-show=late-payment]")).to_be_hidden()

    _pay(server, refunded["id"])
    _pay(server, paid["id"])
    expect(late_page.locator("[data-panel=expired] [data-show=late-payment]")).to_be_visible(timeout=TIMEOUT_MS)
    expect(late_page.locator("[data-panel=expired]")).to_contain_text("arrived after the time to pay ran out")
    expect(_refund_box(late_page)).to_contain_text("Sent back to you: 25.125 USDC on Ethereum", timeout=TIMEOUT_MS)
    expect(_refund_box(late_page).locator("[data-field=refund_address]")).to_have_text(EVM_SHOWN)
    pages.assert_accessible(late_page, "checkout expired, late payment refunded")
    pages.screenshot(late_page, "checkout-late-refund-desktop")

    expect(in_time_page.get_by_role("heading", name="Payment received")).to_be_visible(timeout=TIMEOUT_MS)
    assert _status(server, paid["id"]) == "paid"
    assert not pages.console_errors, pages.console_errors


def test_top_up_after_underpayment_completes_the_payment(server, pages):
    invoice, page = _simulated(server, pages, "underpaid")
    expect(page.get_by_role("heading", name="Payment incomplete")).to_be_visible(timeout=TIMEOUT_MS)
    _pay(server, invoice["id"], outcome="success")                 # the buyer sends the rest
    expect(page.get_by_role("heading", name="Payment received")).to_be_visible(timeout=TIMEOUT_MS)
    expect(_refund_box(page)).to_be_hidden()
    pages.assert_accessible(page, "checkout paid after a top-up")
    assert not pages.console_errors, pages.console_errors


def test_overpaid_is_paid_and_says_where_the_excess_went(server, pages):
    invoice = _awaiting_payment(server)
    page = pages.open(invoice["checkout_url"])
    _pay(server, invoice["id"], outcome="overpaid")
    expect(page.get_by_role("heading", name="Payment received")).to_be_visible(timeout=TIMEOUT_MS)
    refund = _refund_box(page)
    expect(refund.locator("[data-field=refund-done]")).to_contain_text("Sent back to you:", timeout=TIMEOUT_MS)
    expect(refund.locator("[data-field=refund_address]")).to_have_text(EVM_SHOWN)
    pages.assert_accessible(page, "checkout overpaid")
    assert not pages.console_errors, pages.console_errors


def test_a_new_status_reaches_the_page_within_two_seconds(server, pages):
    """The page's own clock is frozen after its first poll; the invoice then moves on the server, and
    two seconds of page time are enough for the page to show it (no timing of the machine)."""
    invoice = _awaiting_payment(server)
    context = pages.browser.new_context()
    pages.contexts.append(context)
    page = context.new_page()
    page.clock.install()
    with page.expect_response(lambda response: response.url.endswith(f"/v1/public/invoices/{invoice['id']}")):
        page.goto(invoice["checkout_url"])
    expect(page.locator("[data-panel=pay] [data-field=deposit_address]")).to_have_text(invoice["deposit_address"])
    page.clock.pause_at(page.evaluate("Date.now()") + 10)          # no page timer fires until told

    _pay(server, invoice["id"])
    wait_for(lambda: _status(server, invoice["id"]) == "paid", timeout=15, what="the move to paid")
    page.clock.run_for(2000)
    expect(page.get_by_role("heading", name="Payment received")).to_be_visible(timeout=5_000)
