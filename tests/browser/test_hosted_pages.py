"""The hosted checkout and payment-link pages in headless Chromium against a live server
(tests/browser/conftest.py): the buyer's whole path, what the pages refuse, and what they never show."""
from __future__ import annotations

import re
import time

from playwright.sync_api import expect
import requests

from tests.browser.conftest import DESKTOP, PHONE, wait_for

EVM_ADDRESS = "0x" + "3f" * 20
TIMEOUT_MS = 20_000


def _invoice(server, **body) -> dict:
    response = server.api("POST", "/v1/invoices", json={"amount": "25.00", **body})
    assert response.status_code == 201, response.text
    return response.json()


def _status(server, invoice_id: str) -> str:
    return server.api("GET", f"/v1/invoices/{invoice_id}").json()["status"]


def test_checkout_from_api_invoice_to_paid_and_back_to_the_shop(server, pages):
    return_url = f"{server.base_url}/health"          # a page of this server: the test never leaves 127.0.0.1
    invoice = _invoice(server, return_url=return_url, metadata={"order_note": "gift-wrap-7731"},
                       external_order_id="order-5521")
    page = pages.open(invoice["checkout_url"])

    # A strict policy of its own on the page, the usual headers, and no merchant-side data in it.
    headers = page.response.headers
    csp = headers["content-security-policy"]
    for directive in ("default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'",
                      "frame-ancestors 'none'"):
        assert directive in csp
    assert "unsafe-inline" not in csp and headers["x-frame-options"] == "DENY"
    html = page.content()
    for private in (server.store_id, server.payout_wallet, "gift-wrap-7731", "order-5521", server.api_key[-8:]):
        assert private not in html
    assert "<script>" not in html                                         # no inline script anywhere

    expect(page.locator(".store")).to_have_text("Lumen Coffee")
    expect(page.locator(".amount")).to_contain_text("25.00")
    expect(page.locator("[data-field=countdown]")).to_have_text(re.compile(r"^(59|60):\d\d$"))
    # The way back while the checkout is open: it leaves the invoice as it is (it simply expires).
    expect(page.locator("#cancel-link")).to_have_text("Cancel and return to the shop")
    expect(page.locator("#cancel-link")).to_have_attribute("href", return_url)
    pages.assert_accessible(page, "checkout, choosing an asset")

    page.select_option("#asset", "usdc.eth")
    expect(page.locator("[data-field=estimate]")).to_contain_text("You will send about 25.125 USDC")
    pages.assert_accessible(page, "checkout with a price estimate")
    page.fill("#refund-to", "not-an-address")
    page.click("#choose-submit")
    expect(page.locator("[data-field=choose-error]")).to_have_text("That does not look like an address on Ethereum.")
    pages.assert_accessible(page, "checkout refusing a refund address")
    assert _status(server, invoice["id"]) in ("pending", "quoted")      # refused before any deposit address

    page.fill("#refund-to", EVM_ADDRESS)
    page.click("#choose-submit")
    address = page.locator("[data-panel=pay] [data-field=deposit_address]")
    expect(address).to_have_text(re.compile(r"^0x[0-9a-f]{40}$"), timeout=TIMEOUT_MS)
    expect(page.locator("[data-panel=pay] [data-field=amount_due]")).to_have_text("25.125")
    qr = page.locator("img.qr")
    wait_for(lambda: qr.evaluate("img => img.complete && img.naturalWidth > 0"), timeout=10, what="the QR code")
    expect(qr).to_have_attribute("alt", f"QR code of the deposit address {address.inner_text()}")   # its text
    expect(page.locator("#cancel-link")).to_be_visible()
    pages.assert_accessible(page, "checkout awaiting payment")
    svg = requests.get(server.base_url + qr.get_attribute("src"), timeout=5)
    assert svg.headers["Content-Type"].startswith("image/svg+xml") and "<path" in svg.text
    assert _status(server, invoice["id"]) == "awaiting_payment"
    pages.screenshot(page, "checkout-desktop")
    phone = pages.open(invoice["checkout_url"], viewport=PHONE)
    expect(phone.locator("[data-field=deposit_address]").first).to_have_text(address.inner_text())
    wait_for(lambda: phone.locator("img.qr").evaluate("img => img.complete && img.naturalWidth > 0"),
             timeout=10, what="the QR code at phone width")
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]   # nothing wider than a phone
    pages.assert_accessible(phone, "checkout awaiting payment, phone width")
    pages.screenshot(phone, "checkout-phone")

    page.click("#simulate")
    expect(page.get_by_role("heading", name="Payment received")).to_be_visible(timeout=TIMEOUT_MS)
    assert _status(server, invoice["id"]) == "paid"
    expect(page.locator("#return-link")).to_have_attribute("href", return_url)
    expect(page.locator("[data-field=redirect-note]")).to_be_visible()
    expect(page.locator("#cancel-link")).to_be_hidden()
    expect(page.locator("[data-field=announce]")).to_contain_text("Payment received")
    pages.assert_accessible(page, "checkout paid")
    pages.screenshot(page, "checkout-paid-desktop")
    page.wait_for_url(return_url, timeout=TIMEOUT_MS)                   # the automatic return to the shop
    assert not pages.console_errors, pages.console_errors


def test_payment_link_refuses_out_of_range_amounts_then_reaches_checkout(server, pages):
    created = server.api("POST", "/v1/payment-links", json={
        "title": "Tip jar for the Saturday roast", "amount_mode": "customer_defined_amount",
        "min_amount": "5.00", "max_amount": "100.00"})
    assert created.status_code == 201, created.text
    link = created.json()
    page = pages.open(link["public_url"])
    assert "script-src 'self'" in page.response.headers["content-security-policy"]
    expect(page.locator(".title")).to_have_text("Tip jar for the Saturday roast")
    expect(page.locator("#amount-hint")).to_have_text("Between 5.00 and 100.00 USD.")
    expect(page.locator("#asset")).to_be_enabled()
    page.select_option("#asset", "usdc.base")
    page.fill("#refund-to", EVM_ADDRESS)
    phone = pages.open(link["public_url"], viewport=PHONE)
    expect(phone.locator("#asset")).to_be_enabled()
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    pages.assert_accessible(phone, "payment link, phone width")
    pages.screenshot(phone, "pay-phone")

    # Refused on the page: nothing is sent.
    page.fill("#amount", "500")
    page.click("#pay-submit")
    amount_error = page.locator("[data-field=amount-error]")
    expect(amount_error).to_have_text("The amount must be between 5.00 and 100.00 USD.")
    pages.assert_accessible(page, "payment link refusing an amount")
    pages.screenshot(page, "pay-desktop")
    assert server.api("GET", f"/v1/payment-links/{link['id']}/invoices").json()["data"] == []

    # Refused by the server: the merchant lowered the limit after the page was loaded.
    assert server.api("PATCH", f"/v1/payment-links/{link['id']}", json={"max_amount": "50.00"}).status_code == 200
    page.fill("#amount", "75")
    page.click("#pay-submit")
    expect(amount_error).to_contain_text("50.00")
    assert server.api("GET", f"/v1/payment-links/{link['id']}/invoices").json()["data"] == []

    page.fill("#amount", "20.5")
    page.click("#pay-submit")
    page.wait_for_url(re.compile(r"/checkout/inv_[0-9a-f]{32}$"), timeout=TIMEOUT_MS)
    expect(page.locator(".amount")).to_contain_text("20.50")
    expect(page.locator("[data-panel=pay] [data-field=deposit_address]")).to_have_text(re.compile(r"^0x[0-9a-f]{40}$"))
    invoices = server.api("GET", f"/v1/payment-links/{link['id']}/invoices").json()["data"]
    assert [(item["amount"], item["status"]) for item in invoices] == [("20.50", "awaiting_payment")]

    # A paused link says why and offers no form; an unknown one is a plain 404 page.
    assert server.api("POST", f"/v1/payment-links/{link['id']}/deactivate").status_code == 200
    paused = pages.open(link["public_url"])
    expect(paused.get_by_role("heading", name="Not accepting payments")).to_be_visible()
    expect(paused.locator("#pay-form")).to_have_count(0)
    pages.assert_accessible(paused, "paused payment link")
    missing = pages.open(f"{server.base_url}/pay/plpub_{'0' * 32}")
    assert missing.response.status == 404
    expect(missing.get_by_role("heading", name="Page not found")).to_be_visible()
    pages.assert_accessible(missing, "payment link not found")
    assert not pages.console_errors, pages.console_errors


def test_expired_and_cancelled_invoices_say_so(server, pages):
    invoice = _invoice(server, amount="12.00", return_url=f"{server.base_url}/health")
    server.sql("UPDATE invoice SET expires_at = ? WHERE public_id = ?", ("2000-01-01 00:00:00", invoice["id"]))
    wait_for(lambda: _status(server, invoice["id"]) == "expired", timeout=15, what="the expiry sweep")
    page = pages.open(invoice["checkout_url"])
    expect(page.get_by_role("heading", name="This invoice has expired")).to_be_visible()
    expect(page.locator("[data-panel=choose]")).to_be_hidden()
    expect(page.locator(".timer")).to_be_hidden()
    expect(page.locator("#return-link")).to_be_visible()
    expect(page.locator("#cancel-link")).to_be_hidden()
    pages.assert_accessible(page, "checkout expired")
    pages.screenshot(page, "checkout-expired-desktop")
    pages.screenshot(pages.open(invoice["checkout_url"], viewport=PHONE), "checkout-expired-phone")

    cancelled = _invoice(server)
    assert server.api("POST", f"/v1/invoices/{cancelled['id']}/cancel").status_code == 200
    page = pages.open(cancelled["checkout_url"])
    expect(page.get_by_role("heading", name="This invoice was cancelled")).to_be_visible()
    pages.assert_accessible(page, "checkout cancelled")
    missing = pages.open(f"{server.base_url}/checkout/inv_{'0' * 32}")
    assert missing.response.status == 404 and "text/html" in missing.response.headers["content-type"]
    assert not pages.console_errors, pages.console_errors


def test_cancel_and_return_to_the_shop_leaves_the_invoice_to_expire(server, pages):
    return_url = f"{server.base_url}/health"
    invoice = _invoice(server, return_url=return_url)
    page = pages.open(invoice["checkout_url"])
    expect(page.locator("#asset")).to_be_enabled()
    page.click("#cancel-link")
    page.wait_for_url(return_url, timeout=TIMEOUT_MS)
    assert _status(server, invoice["id"]) == "pending"          # not cancelled: it simply expires
    # Without a return_url there is nowhere to go back to, so no such link.
    page = pages.open(_invoice(server)["checkout_url"])
    expect(page.locator("#asset")).to_be_enabled()
    expect(page.locator("#cancel-link")).to_have_count(0)
    assert not pages.console_errors, pages.console_errors


def test_keyboard_alone_reaches_every_control_and_pays(server, pages):
    invoice = _invoice(server, return_url=f"{server.base_url}/health")
    page = pages.open(invoice["checkout_url"])
    expect(page.locator("#asset")).to_be_enabled()
    reached = pages.assert_keyboard_reachable(page, "checkout, choosing an asset")
    assert reached.index("asset") < reached.index("refund-to") < reached.index("choose-submit")

    page.focus("#asset")
    for _ in range(12):                                          # arrow keys pick in a closed <select>
        if page.eval_on_selector("#asset", "select => select.value") == "usdc.eth":
            break
        page.keyboard.press("ArrowDown")
    expect(page.locator("[data-field=estimate]")).to_contain_text("USDC")
    page.keyboard.press("Tab")
    page.keyboard.type(EVM_ADDRESS)
    page.keyboard.press("Enter")                                 # submits the form
    expect(page.locator("[data-panel=pay] [data-field=deposit_address]")).to_have_text(
        re.compile(r"^0x[0-9a-f]{40}$"), timeout=TIMEOUT_MS)
    expect(page.locator("#pay-heading")).to_be_focused()        # the form is gone: focus follows
    reached = pages.assert_keyboard_reachable(page, "checkout awaiting payment")
    assert {"Copy the amount", "Copy the deposit address", "outcome", "simulate", "cancel-link"} <= set(reached)

    page.focus("#simulate")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Payment received")).to_be_focused(timeout=TIMEOUT_MS)
    assert not pages.console_errors, pages.console_errors


def test_every_failed_call_says_so_and_offers_a_retry(server, pages):
    """A dropped connection (the browser's own failure, not a mocked server) on each call the page
    makes: a short message and "Try again", which then works."""
    invoice = _invoice(server)
    assets_route, status_route = "**/v1/public/assets", f"**/v1/public/invoices/{invoice['id']}"
    quote_route = f"**/v1/public/invoices/{invoice['id']}/quote"
    context = pages.browser.new_context(viewport=DESKTOP)
    pages.contexts.append(context)
    page = context.new_page()
    for route in (assets_route, status_route):
        page.route(route, lambda route: route.abort("internetdisconnected"))
    page.goto(invoice["checkout_url"])

    assets_error = page.locator("[data-field=assets-error]")
    expect(assets_error).to_contain_text("We could not load the assets you can pay with.")
    poll_error = page.locator("[data-field=poll-error]")
    expect(poll_error).to_contain_text("We could not check the payment status.")
    pages.assert_accessible(page, "checkout after failed calls")
    for route in (assets_route, status_route):
        page.unroute(route)
    assets_error.get_by_role("button", name="Try again").click()
    expect(page.locator("#asset")).to_be_enabled()
    expect(assets_error).to_be_hidden()
    poll_error.get_by_role("button", name="Try again").click()
    expect(poll_error).to_be_hidden()

    page.route(quote_route, lambda route: route.abort("internetdisconnected"))
    page.select_option("#asset", "usdc.eth")
    estimate_error = page.locator("[data-field=estimate-error]")
    expect(estimate_error).to_contain_text("We could not get a price in USDC on Ethereum.")
    expect(page.locator("[data-field=estimate]")).to_be_empty()
    pages.assert_accessible(page, "checkout with a failed price estimate")
    pages.screenshot(page, "checkout-estimate-failed-desktop")
    page.unroute(quote_route)
    estimate_error.get_by_role("button", name="Try again").click()
    expect(page.locator("[data-field=estimate]")).to_contain_text("You will send about 25.125 USDC")
    expect(estimate_error).to_be_hidden()

    # Refused for real by the server: the merchant cancelled meanwhile, and the page says so.
    assert server.api("POST", f"/v1/invoices/{invoice['id']}/cancel").status_code == 200
    page.select_option("#asset", "usdc.base")
    expect(page.get_by_role("heading", name="This invoice was cancelled")).to_be_visible(timeout=TIMEOUT_MS)


def test_memo_and_used_up_link_states_are_accessible(server, pages):
    """The states no other test reaches: a deposit that needs a memo, and a paid single-use link."""
    invoice = _invoice(server)
    quoted = server.api("POST", f"/v1/public/invoices/{invoice['id']}/quote",
                        json={"origin_asset": "xlm", "refund_to": "G" + "A" * 55, "dry": False})
    assert quoted.status_code == 200, quoted.text
    page = pages.open(invoice["checkout_url"])
    memo = quoted.json()["invoice"]["deposit_memo"]
    expect(page.locator("[data-panel=pay] [data-field=deposit_memo]")).to_have_text(memo)
    expect(page.locator("[data-field=memo-box]")).to_be_visible()
    pages.assert_accessible(page, "checkout awaiting payment with a memo")

    created = server.api("POST", "/v1/payment-links", json={
        "title": "One bag of beans", "amount_mode": "fixed_amount", "amount": "18.00",
        "allow_multiple_payments": False})
    assert created.status_code == 201, created.text
    link = created.json()
    checkout = requests.post(f"{server.base_url}/v1/public/payment-links/{link['public_id']}/checkout",
                             json={}, timeout=10).json()
    assert server.api("POST", f"/v1/test_helpers/invoices/{checkout['invoice_id']}/pay", json={}).status_code == 202
    wait_for(lambda: _status(server, checkout["invoice_id"]) == "paid", timeout=15, what="the link's invoice paid")
    used = pages.open(link["public_url"])
    expect(used.get_by_role("heading", name="Already paid")).to_be_visible()
    pages.assert_accessible(used, "used-up single-use payment link")
    assert not pages.console_errors, pages.console_errors


STRANGER_ADDRESS = "0x" + "5e" * 20


def shown(address: str) -> str:
    """An address as the buyer views show it: shortened."""
    return address[:6] + "…" + address[-4:]


def _pay_on_link_page(page, refund_to):
    expect(page.locator("#asset")).to_be_enabled()
    page.select_option("#asset", "usdc.eth")
    page.fill("#refund-to", refund_to)
    page.click("#pay-submit")


def test_two_buyers_on_one_single_use_link_never_share_a_refund_address(server, pages):
    """A stranger who commits a single-use link first does not get the real buyer's money, and the
    buyer is never shown deposit instructions whose refunds would go to the stranger."""
    created = server.api("POST", "/v1/payment-links", json={
        "title": "One sack of green beans", "amount_mode": "fixed_amount", "amount": "40.00",
        "allow_multiple_payments": False})
    assert created.status_code == 201, created.text
    link = created.json()

    stranger = pages.open(link["public_url"])
    _pay_on_link_page(stranger, STRANGER_ADDRESS)
    stranger.wait_for_url(re.compile(r"/checkout/inv_[0-9a-f]{32}$"), timeout=TIMEOUT_MS)
    # While awaiting payment the page says where refunds go.
    expect(stranger.locator("[data-panel=pay] [data-field=committed_refund_to]")).to_have_text(
        shown(STRANGER_ADDRESS))
    taken_url = stranger.url

    buyer = pages.open(link["public_url"])
    expect(buyer.locator("#taken-notice")).to_contain_text("Someone else is already paying this single-use link")
    _pay_on_link_page(buyer, EVM_ADDRESS)
    expect(buyer.locator("[data-field=pay-error]")).to_contain_text("already being paid by someone else")
    assert "/pay/" in buyer.url
    pages.assert_accessible(buyer, "single-use link taken by someone else")
    pages.screenshot(buyer, "pay-link-taken-desktop")

    # The stranger's checkout page reached by the buyer, who had typed another refund address in this
    # browser: the deposit instructions are refused, not shown.
    invoice_id = taken_url.rsplit("/", 1)[1]
    buyer.evaluate("([key, value]) => window.sessionStorage.setItem(key, value)",
                   [f"tender.refund_to.{invoice_id}", EVM_ADDRESS])
    buyer.goto(taken_url)
    expect(buyer.get_by_role("heading", name="This payment is not yours")).to_be_visible(timeout=TIMEOUT_MS)
    expect(buyer.locator("[data-panel=pay]")).to_be_hidden()
    pages.assert_accessible(buyer, "checkout of someone else's payment")

    # The stranger's invoice ends (the merchant cancels it): the link is the buyer's to pay.
    assert server.api("POST", f"/v1/invoices/{invoice_id}/cancel").status_code == 200
    buyer.goto(link["public_url"])
    expect(buyer.locator("#taken-notice")).to_have_count(0)
    _pay_on_link_page(buyer, EVM_ADDRESS)
    buyer.wait_for_url(re.compile(r"/checkout/inv_[0-9a-f]{32}$"), timeout=TIMEOUT_MS)
    assert buyer.url != taken_url
    expect(buyer.locator("[data-panel=pay] [data-field=committed_refund_to]")).to_have_text(shown(EVM_ADDRESS))
    expect(buyer.locator("[data-panel=pay] [data-field=deposit_address]")).to_have_text(re.compile(r"^0x[0-9a-f]{40}$"))
    assert not pages.console_errors, pages.console_errors


def test_two_buyers_on_one_checkout_page_the_second_is_told_it_is_not_theirs(server, pages):
    invoice = _invoice(server)
    first, second = pages.open(invoice["checkout_url"]), pages.open(invoice["checkout_url"])
    for page, address in ((first, STRANGER_ADDRESS), (second, EVM_ADDRESS)):
        expect(page.locator("#asset")).to_be_enabled()
        page.select_option("#asset", "usdc.eth")
        page.fill("#refund-to", address)
    first.click("#choose-submit")
    expect(first.locator("[data-panel=pay] [data-field=committed_refund_to]")).to_have_text(
        shown(STRANGER_ADDRESS), timeout=TIMEOUT_MS)
    # The second tab's own status poll may already have seen the first commit and hidden its form
    # before this click: the form is submitted as the button's click would, visible or not, so the
    # refused commit (409) is tried either way; both orders must end in the same notice.
    second.locator("#choose-submit").evaluate("button => button.click()")
    expect(second.get_by_role("heading", name="This payment is not yours")).to_be_visible(timeout=TIMEOUT_MS)
    expect(second.locator("[data-panel=pay]")).to_be_hidden()
    expect(second.locator("[data-field=typed_refund_to]")).to_have_text(EVM_ADDRESS)
    assert server.api("GET", f"/v1/invoices/{invoice['id']}").json()["status"] == "awaiting_payment"
    assert not pages.console_errors, pages.console_errors


PAGE_STEPS_SECONDS = 20     # ample for the browser to open the page and ask to pay
CHECKOUTS_PER_CLIENT_PER_MINUTE = 10     # RATE_LIMIT_PUBLIC_CHECKOUT_PER_CLIENT's default


def _spend_checkout_allowance(path: str) -> None:
    """Post checkouts until refused. The limits count in fixed one-minute windows: when the
    refusal says the window ends before the page could be refused in it, wait for that clock
    boundary (a time, not a worker) and spend the next window's allowance instead. Posts go on
    until refused, for up to two windows' allowance: a window that ends among them starts the
    count again (twelve posts, a fixed number, were not refused when one did)."""
    for _ in range(2):
        statuses = []
        for _ in range(2 * (CHECKOUTS_PER_CLIENT_PER_MINUTE + 1)):
            response = requests.post(path, json={}, timeout=10)
            statuses.append(response.status_code)
            if response.status_code == 429:
                break
        assert statuses[-1] == 429, statuses
        window_left = int(response.headers["Retry-After"])
        if window_left >= PAGE_STEPS_SECONDS:
            return
        time.sleep(window_left + 0.5)
    raise AssertionError("the checkout allowance was never spent with time left in its window")


def test_a_buyer_refused_for_too_many_attempts_is_told_when_to_retry(server, pages):
    """Last in the module: it spends this client's checkout allowance on one link (10 a minute)."""
    created = server.api("POST", "/v1/payment-links", json={
        "title": "Drip bags", "amount_mode": "fixed_amount", "amount": "9.00"})
    assert created.status_code == 201, created.text
    link = created.json()
    _spend_checkout_allowance(f"{server.base_url}/v1/public/payment-links/{link['public_id']}/checkout")
    page = pages.open(link["public_url"])
    _pay_on_link_page(page, EVM_ADDRESS)
    error = page.locator("[data-field=pay-error]")
    expect(error).to_contain_text(re.compile(r"Too many attempts; please try again in \d+ seconds?\."))
    expect(error.get_by_role("button", name="Try again")).to_be_visible()
    pages.assert_accessible(page, "payment link refused for too many attempts")
