"""Every page of the merchant dashboard in headless Chromium (tests/support/dashboard_pages.py lists
them), each checked with axe-core (no violation at all) and for reaching every control with Tab,
including the pages the walk in test_dashboard.py does not open: the links' pages signed out, the
store picker of a member of two stores, the confirm page, an installation, an unpaid invoice, the
403 and 404 pages, and several pages at phone width. Each is saved as the screenshot
docs/dashboard.md shows."""
from __future__ import annotations

import json
from urllib.parse import urlsplit

import requests
from playwright.sync_api import expect

from tests.browser.conftest import PHONE, wait_for
from tests.browser.test_dashboard import _flask
from tests.support.dashboard_pages import PAGES, PHONE_PAGES, TAKEN_BY_THE_WALK
from tests.support.polling import free_port

PASSWORD = "a long owner password"


def _check(pages, page, route: str, *, name: str | None = None) -> None:
    """axe-core on the page as it is now, its screenshot (unless the walk takes it), and the keyboard."""
    state = name or route
    expect(page.locator("main h1").first).to_be_visible()
    pages.assert_accessible(page, state, impacts=None)
    shot = name or PAGES[route]
    if shot not in TAKEN_BY_THE_WALK:
        pages.screenshot(page, shot)          # before the Tabs: no focus ring on the picture
    pages.assert_keyboard_reachable(page, state)


def _invitation_url(server, email: str, store_id: str, role: str = "owner") -> str:
    return json.loads(_flask(server, "users", "invite", "--store", store_id, "--email", email, "--role", role,
                             "--json"))["invitation_url"]


def _accept(page, url: str, password: str = PASSWORD) -> None:
    page.goto(url)
    if page.locator("#password_again").count():
        page.fill("#password_again", password)
    page.fill("#password", password)
    page.click("button[type=submit].primary")


def _store_with_an_installation_and_a_failing_endpoint(server) -> dict:
    """An unpaid invoice, a payment link, a webhook endpoint nobody listens at (its delivery fails),
    and a WooCommerce installation: ids by the route argument that takes them."""
    closed = f"http://127.0.0.1:{free_port()}"
    endpoint = server.api("POST", "/v1/webhook-endpoints", json={"url": closed + "/tender", "name": "Shop receiver",
                                                                  "events": ["*"]}).json()
    link = server.api("POST", "/v1/payment-links", json={"title": "Beans of the month", "amount_mode": "fixed_amount",
                                                         "amount": "18.00", "currency": "USD"}).json()
    invoice = server.api("POST", "/v1/invoices", json={"amount": "12.00", "external_order_id": "order-12"}).json()
    bootstrap = json.loads(_flask(server, "keys", "create", "--store", server.store_id, "--kind", "bootstrap",
                                  "--json"))["api_key"]
    connected = requests.post(server.base_url + "/v1/integration/woocommerce/connect", timeout=10,
                              headers={"Authorization": f"Bearer {bootstrap}"},
                              json={"site_url": "https://shop.lumen.test", "webhook_url": closed + "/woo",
                                    "plugin_version": "1.4.0"})
    assert connected.status_code == 200, connected.text
    return {"invoice_id": invoice["id"], "link_id": link["id"], "endpoint_id": endpoint["id"]}


def test_every_dashboard_page_is_accessible_and_reachable_by_keyboard(server, pages):
    ids = _store_with_an_installation_and_a_failing_endpoint(server)
    second = json.loads(_flask(server, "stores", "create", "--name", "Lumen Roastery", "--payout-wallet",
                               "lumen-roastery.near", "--json"))
    owner_link = _invitation_url(server, "owner@lumen.test", server.store_id)

    # Signed out: sign-in, asking for a reset, the invitation.
    page = pages.open(server.base_url + "/dashboard/login")
    _check(pages, page, "/dashboard/login")
    page.goto(server.base_url + "/dashboard/password-reset")
    _check(pages, page, "/dashboard/password-reset")
    page.fill("#email", "nobody@lumen.test")
    page.click("button[type=submit].primary")
    expect(page.locator("main")).to_contain_text("If that address has an account")
    _check(pages, page, "/dashboard/password-reset", name="dashboard-password-reset-sent")
    page.goto(owner_link)
    _check(pages, page, "/dashboard/invitations/<token>")
    _accept(page, owner_link)
    expect(page.get_by_role("heading", name="Lumen Coffee")).to_be_visible()

    # A member of two stores picks one after signing in.
    _accept(page, _invitation_url(server, "owner@lumen.test", second["store_id"]))
    expect(page.get_by_role("heading", name="Lumen Roastery")).to_be_visible()      # joined: signed in there
    page.context.clear_cookies()
    page.goto(server.base_url + "/dashboard/login")
    page.fill("#email", "owner@lumen.test")
    page.fill("#password", PASSWORD)
    page.click("button[type=submit].primary")
    expect(page).to_have_url(server.base_url + "/dashboard/stores")
    _check(pages, page, "/dashboard/stores")
    page.click("button:has-text('Lumen Coffee')")
    expect(page.get_by_role("heading", name="Lumen Coffee")).to_be_visible()

    # The endpoint's delivery fails (nothing listens), then every page with the store's ids.
    page.goto(f"{server.base_url}/dashboard/webhooks/{ids['endpoint_id']}")
    delivery = page.locator("a[href*='/dashboard/webhooks/deliveries/']")
    wait_for(lambda: page.reload() or delivery.count() > 0, timeout=30, what="the endpoint's first delivery")
    ids["delivery_id"] = urlsplit(delivery.first.get_attribute("href")).path.rsplit("/", 1)[1]
    for route in PAGES:
        if route.startswith(("/dashboard/login", "/dashboard/password-reset", "/dashboard/invitations",
                             "/dashboard/stores")):
            continue
        path = route
        for argument, value in ids.items():
            path = path.replace(f"<{argument}>", value)
        assert page.goto(server.base_url + path).status == 200, path
        _check(pages, page, route)
    assert page.goto(server.base_url + "/dashboard/invoices/inv_00000000000000000000000000000000").status == 404
    _check(pages, page, "404", name="dashboard-not-found")

    # The phone: several pages, none wider than the screen.
    phone = pages.open(server.base_url + "/dashboard/login", viewport=PHONE)
    phone.fill("#email", "owner@lumen.test")
    phone.fill("#password", PASSWORD)
    phone.click("button[type=submit].primary")
    phone.click("button:has-text('Lumen Coffee')")
    expect(phone.get_by_role("heading", name="Lumen Coffee")).to_be_visible()
    for route, name in PHONE_PAGES.items():
        path = route.replace("<invoice_id>", ids["invoice_id"])
        phone.goto(server.base_url + path)
        assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], path
        _check(pages, phone, path, name=name)

    # A viewer: the reset link's new password, and the 403 page.
    viewer_link = _invitation_url(server, "books@lumen.test", server.store_id, "viewer")
    viewer = pages.open(viewer_link)
    _accept(viewer, viewer_link, "the bookkeeper's password")
    expect(viewer.get_by_role("heading", name="Lumen Coffee")).to_be_visible()
    reset = json.loads(_flask(server, "users", "reset-link", "--email", "books@lumen.test", "--json"))
    viewer.context.clear_cookies()
    viewer.goto(reset["password_reset_url"])
    _check(pages, viewer, "/dashboard/password-reset/<token>")
    viewer.fill("#password", "the bookkeeper's new password")
    viewer.fill("#password_again", "the bookkeeper's new password")
    viewer.click("button[type=submit].primary")
    expect(viewer.get_by_role("heading", name="Lumen Coffee")).to_be_visible()
    viewer.goto(server.base_url + "/dashboard/team")
    expect(viewer.get_by_role("heading", name="Not allowed")).to_be_visible()
    _check(pages, viewer, "403", name="dashboard-not-allowed")
    assert not pages.console_errors, pages.console_errors
