"""What a buyer and a merchant do in the test shop, for the WooCommerce stand-in and for a real
WooCommerce (tests/support/wordpress.py builds either): the classic checkout and the Checkout block
in Chromium, an order through the Store API, the order screen's status and its refund button."""
from __future__ import annotations

import re
import time

from playwright.sync_api import expect
import requests

from tests.support import wordpress

BILLING = {"first_name": "Ada", "last_name": "Buyer", "address_1": "1 Test Street", "city": "Testville",
           "state": "CA", "postcode": "94016", "country": "US", "email": "ada@shop.example", "phone": "5550100"}


class StandinShop:
    real = False

    def __init__(self, site):
        self.site = site

    def classic_checkout(self, buyer, total: str) -> None:
        """Tender chosen and the order placed; the caller waits for where it lands."""
        buyer.goto(f"{self.site.url}/?tender-standin=checkout&total={total}")
        buyer.check("#payment_method_tender")
        buyer.click("#place_order")

    def checkout_error(self, buyer):
        return buyer.locator(".woocommerce-error")

    def checkout_offers_tender(self) -> bool:
        return "payment_method_tender" in requests.get(f"{self.site.url}/?tender-standin=checkout", timeout=20).text

    def block_checkout(self, buyer, total: str) -> None:
        buyer.goto(f"{self.site.url}/?tender-standin=checkout-block&total={total}")

    def store_api_order(self, total: str) -> dict:
        return requests.post(f"{self.site.url}/?rest_route=/wc/store/v1/checkout",
                             json={"payment_method": "tender", "total": total}, timeout=30).json()

    def order_screen(self, admin, order_id: int) -> None:
        admin.goto(f"{self.site.url}/wp-admin/admin.php?page=wc-orders&id={order_id}")

    def pay_again(self, buyer, order_id: int) -> str | None:
        """The buyer's "Pay for this order" of an unpaid order, Tender chosen: the address the shop
        sent the buyer to, or None when it refused (and stayed on its own page)."""
        answer = requests.post(f"{self.site.url}/?tender-standin=order-pay&order={order_id}", allow_redirects=False,
                               timeout=30)
        if answer.status_code == 302:
            return answer.headers["Location"]
        assert answer.status_code == 400 and "Location" not in answer.headers, (answer.status_code, answer.text)
        return None

    def expect_status(self, admin, status: str) -> None:
        expect(admin.locator("#order-status")).to_have_text(status)

    def refund(self, admin, amount: str, reason: str) -> str:
        assert admin.locator("#do-api-refund").inner_text() == "Refund via Tender (crypto)"
        admin.fill("#refund_amount", amount)
        admin.fill("#refund_reason", reason)
        admin.click("#do-api-refund")
        return admin.locator("body").inner_text()


class RealShop(StandinShop):
    """A real WooCommerce: products in a cart, WooCommerce's own pages and admin screens."""
    real = True

    def _product(self, total: str) -> int:
        return self.site.cli("product", total)["id"]

    def _fill_classic(self, buyer) -> None:
        for field, value in BILLING.items():
            selector = f"#billing_{field}"
            if field in ("country", "state"):
                continue
            if buyer.locator(selector).count():
                buyer.fill(selector, value)

    def classic_checkout(self, buyer, total: str) -> None:
        buyer.goto(f"{self.site.url}/?add-to-cart={self._product(total)}")
        buyer.goto(self.site.shop["pages"]["tender-classic-checkout"])
        self._fill_classic(buyer)
        buyer.check("#payment_method_tender", force=True)
        buyer.click("#place_order")

    def checkout_error(self, buyer):
        return buyer.locator(".woocommerce-error, .wc-block-components-notice-banner.is-error").first

    def checkout_offers_tender(self) -> bool:
        session = requests.Session()
        session.get(f"{self.site.url}/?add-to-cart={self._product('1.00')}", timeout=30)
        return "payment_method_tender" in session.get(self.site.shop["pages"]["tender-classic-checkout"], timeout=30).text

    def block_checkout(self, buyer, total: str) -> None:
        buyer.goto(f"{self.site.url}/?add-to-cart={self._product(total)}")
        buyer.goto(self.site.shop["pages"]["tender-block-checkout"])
        buyer.fill("#email", BILLING["email"])
        filled = {"email": BILLING["email"]}
        for field in ("first_name", "last_name", "address_1", "city", "postcode", "phone"):
            box = buyer.locator(f"#billing-{field}")
            if box.count():
                box.fill(BILLING[field])
                filled[field] = BILLING[field]
        self._until_the_cart_holds(buyer, filled)

    @staticmethod
    def _until_the_cart_holds(buyer, billing: dict) -> None:
        """Wait until the server's cart holds the typed address and nothing is recalculating. The
        block sends typed fields to the server after a pause or when a field loses focus; on older
        WooCommerce (8.0) that send disables Place Order, so a click that is itself the focus loss
        lands on a disabled button and is dropped: the order would never be placed."""
        buyer.evaluate("() => document.activeElement && document.activeElement.blur()")
        buyer.wait_for_function(
            """(billing) => {
                const cart = wp.data.select('wc/store/cart'), checkout = wp.data.select('wc/store/checkout');
                const held = cart.getCartData().billingAddress || {};
                return Object.keys(billing).every((key) => held[key] === billing[key])
                    && !cart.isCustomerDataUpdating() && !checkout.isCalculating();
            }""", arg=billing)

    def store_api_order(self, total: str) -> dict:
        session = requests.Session()
        cart = session.get(f"{self.site.url}/?rest_route=/wc/store/v1/cart", timeout=30)
        headers = {"Nonce": cart.headers.get("Nonce", ""), "Cart-Token": cart.headers.get("Cart-Token", "")}
        added = session.post(f"{self.site.url}/?rest_route=/wc/store/v1/cart/add-item", headers=headers,
                             json={"id": self._product(total), "quantity": 1}, timeout=30)
        assert added.status_code in (200, 201), added.text
        return session.post(f"{self.site.url}/?rest_route=/wc/store/v1/checkout", headers=headers, timeout=60,
                            json={"billing_address": BILLING, "payment_method": "tender"}).json()

    def order_screen(self, admin, order_id: int) -> None:
        path = (f"admin.php?page=wc-orders&action=edit&id={order_id}" if self.site.shop.get("hpos")
                else f"post.php?post={order_id}&action=edit")
        admin.goto(f"{self.site.url}/wp-admin/{path}")

    def pay_again(self, buyer, order_id: int) -> str | None:
        """WooCommerce's order-pay page, as the buyer opens it from the order's link (confirming the
        billing email when WooCommerce asks for it: the order is older than its grace period)."""
        buyer.goto(self.site.cli("pay-url", str(order_id))["url"])
        if buyer.locator("form.woocommerce-verify-email").count():
            buyer.fill("form.woocommerce-verify-email #email", BILLING["email"])
            with buyer.expect_navigation():
                buyer.click("form.woocommerce-verify-email button[name=verify]")
        buyer.check("#payment_method_tender", force=True)
        with buyer.expect_navigation(wait_until="commit"):
            buyer.click("#place_order")
        if buyer.url.startswith(self.site.url):
            expect(self.checkout_error(buyer)).to_be_visible()
            return None
        return buyer.url

    def expect_status(self, admin, status: str) -> None:
        expect(admin.locator("#order_status")).to_have_value(f"wc-{status}", timeout=15_000)

    def refund(self, admin, amount: str, reason: str) -> str:
        admin.click("button.refund-items")
        admin.fill("#refund_amount", amount)
        admin.fill("#refund_reason", reason)
        button = admin.locator("button.do-api-refund")
        assert re.search(r"via Tender \(crypto\)", button.inner_text()), button.inner_text()
        admin.once("dialog", lambda dialog: dialog.accept())
        answers = []

        def keep_refund_answer(route):      # read before WooCommerce reloads the page on success
            answer = route.fetch()
            if "woocommerce_refund_line_items" in (route.request.post_data or ""):
                answers.append(answer.text())
            route.fulfill(response=answer)
        admin.route(re.compile(r"admin-ajax\.php"), keep_refund_answer)
        try:
            button.click()
            admin.wait_for_load_state()
            deadline = time.monotonic() + 30
            while not answers and time.monotonic() < deadline:
                admin.wait_for_timeout(100)
        finally:
            admin.unroute(re.compile(r"admin-ajax\.php"))
        return answers[0] if answers else ""


def shop_for(site):
    return RealShop(site) if wordpress.REAL_WOOCOMMERCE else StandinShop(site)
