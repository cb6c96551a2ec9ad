"""The merchant dashboard in headless Chromium against a live server (tests/browser/conftest.py): a new
owner from the operator's invitation link through TOTP, a payment link, a simulated payment seen on
the home page, a refund funded in the sandbox, an API key, and a viewer who reads and cannot change.
axe-core finds no violation at all on any page on the way; the home page fits a phone."""
from __future__ import annotations

import json
import re
import subprocess
from urllib.parse import urlsplit

from playwright.sync_api import expect
import pyotp
import requests

from tests.browser.conftest import BIN, PHONE, ROOT, _env, wait_for
from tests.support.polling import free_port

TIMEOUT_MS = 20_000
PASSWORD = "a long owner password"


def _flask(server, *args) -> str:
    env = _env(server.database_url, urlsplit(server.base_url).port)
    done = subprocess.run([str(BIN / "flask"), "--app", "wsgi", *args], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True, timeout=60)
    return done.stdout.strip().splitlines()[-1]


def _checked(pages, page, state: str, name: str | None = None) -> None:
    pages.assert_accessible(page, state, impacts=None)
    if name:
        pages.screenshot(page, name)


def _reload_until(page, check, what: str) -> None:
    def settled():
        page.reload()
        return check()
    wait_for(settled, timeout=30, what=what)


def _accept_invitation(pages, url, password=PASSWORD):
    page = pages.open(url)
    _checked(pages, page, "invitation")
    page.fill("#password", password)
    page.fill("#password_again", password)
    page.click("button[type=submit].primary")
    return page


def test_a_new_owner_runs_the_store_from_the_dashboard(server, pages, browser):
    url = json.loads(_flask(server, "users", "invite", "--store", server.store_id, "--email", "owner@lumen.test",
                            "--json"))["invitation_url"]
    _checked(pages, pages.open(server.base_url + "/dashboard/login"), "sign-in")
    page = _accept_invitation(pages, url)
    expect(page.get_by_role("heading", name="Lumen Coffee")).to_be_visible()
    assert "unsafe-inline" not in page.context.request.get(server.base_url + "/dashboard/").headers[
        "content-security-policy"]

    # TOTP: the key from the page, a code from it.
    page.goto(server.base_url + "/dashboard/account/totp")
    secret = page.locator("main code").inner_text().strip()
    _checked(pages, page, "authenticator set-up", "dashboard-totp")
    page.fill("#code", pyotp.TOTP(secret).now())
    page.click("button[type=submit].primary")
    expect(page.get_by_role("heading", name="Lumen Coffee")).to_be_visible()

    # A payment link.
    page.goto(server.base_url + "/dashboard/payment-links/new")
    _checked(pages, page, "new payment link", "dashboard-payment-link-new")
    pages.assert_keyboard_reachable(page, "new payment link")
    page.fill("#title", "Beans of the month")
    page.fill("#amount", "18.00")
    page.click("button[type=submit].primary")
    expect(page.get_by_role("heading", name="Beans of the month")).to_be_visible()
    expect(page.locator("#share")).to_have_value(re.compile(r"/pay/plpub_[0-9a-z]+$"))
    _checked(pages, page, "payment link", "dashboard-payment-link")

    # A webhook endpoint nothing listens at: its deliveries fail.
    page.goto(server.base_url + "/dashboard/webhooks")
    page.fill("#name", "Shop receiver")
    page.fill("#url", f"http://127.0.0.1:{free_port()}/tender")
    page.click("text=Add the endpoint")
    expect(page.locator("#new-secret")).to_have_value(re.compile(r"^whsec_[0-9a-f]{64}$"))

    # A payment, simulated from the invoice's page, seen on the home page.
    invoice = server.api("POST", "/v1/invoices", json={"amount": "42.00", "external_order_id": "order-88"}).json()
    page.goto(server.base_url + "/dashboard/invoices")
    _checked(pages, page, "invoices")
    page.fill("#q", "order-88")
    page.click("form[role=search] button")
    page.click(f"text={invoice['id']}")
    page.click("text=Simulate a payment (sandbox)")
    expect(page.locator(".notice")).to_contain_text("simulated payment is on its way")
    _reload_until(page, lambda: page.locator(".facts dd").first.inner_text() == "paid", "the invoice to be paid")
    _reload_until(page, lambda: page.locator("summary", has_text="Refund").count() == 1, "the invoice to settle")
    _checked(pages, page, "paid invoice", "dashboard-invoice")
    page.goto(server.base_url + "/dashboard/")
    expect(page.locator("table")).to_contain_text(re.compile(r"USD\s+42\.\d\d \(1\)"))      # what the buyer paid
    _checked(pages, page, "home", "dashboard-home")
    pages.assert_keyboard_reachable(page, "home")

    # A refund, funded with the sandbox button.
    page.goto(f"{server.base_url}/dashboard/invoices/{invoice['id']}")
    page.click("summary:has-text('Refund')")
    page.fill("#amount", "5.00")
    page.fill("#reason", "Spilled bag")
    page.click("text=Create the refund")
    expect(page.locator("table")).to_contain_text("awaiting_funds")
    _checked(pages, page, "refunds", "dashboard-refunds")
    page.click("text=Fund it (sandbox)")
    expect(page.locator(".notice")).to_contain_text("Simulated funding sent")
    _reload_until(page, lambda: "succeeded" in page.locator("table").inner_text(), "the refund to succeed")

    # The endpoint's failed delivery, sent again from its page.
    page.goto(server.base_url + "/dashboard/webhooks")
    page.click("text=Shop receiver")
    _checked(pages, page, "webhook endpoint", "dashboard-webhook-endpoint")
    page.locator("tbody a").last.click()
    _reload_until(page, lambda: "#1" in page.locator("main").inner_text(), "the first attempt to fail")
    _checked(pages, page, "webhook delivery", "dashboard-webhook-delivery")
    page.click("text=Send it again")
    expect(page.locator(".notice")).to_contain_text("Sent again")
    _reload_until(page, lambda: "#2" in page.locator("main").inner_text(), "the redelivery's attempt")

    # An API key, shown once, that works.
    page.goto(server.base_url + "/dashboard/api-keys")
    page.click("text=Create a key")
    raw = page.locator("#new-key").input_value()
    assert re.fullmatch(r"sk_live_[0-9a-f]{40}", raw)
    _checked(pages, page, "a new API key")
    assert requests.get(server.base_url + "/v1/invoices", headers={"Authorization": f"Bearer {raw}"},
                        timeout=10).status_code == 200
    page.goto(server.base_url + "/dashboard/api-keys")
    assert raw not in page.content()
    _checked(pages, page, "API keys", "dashboard-api-keys")

    for path, name in (("/dashboard/webhooks", "dashboard-webhooks"), ("/dashboard/books", "dashboard-books"),
                       ("/dashboard/settings", "dashboard-settings"), ("/dashboard/integrations", None),
                       ("/dashboard/audit", "dashboard-audit"), ("/dashboard/payment-links", None),
                       ("/dashboard/refunds", None), ("/dashboard/account", None)):
        page.goto(server.base_url + path)
        _checked(pages, page, path, name)

    # A viewer, invited from the Team page, reads and cannot change.
    page.goto(server.base_url + "/dashboard/team")
    page.fill("#email", "books@lumen.test")
    page.click("button:has-text('Invite')")
    link = page.locator("#invitation-link").input_value()
    _checked(pages, page, "team", "dashboard-team")
    viewer = _accept_invitation(pages, link, "the bookkeeper's password")
    viewer.goto(f"{server.base_url}/dashboard/invoices/{invoice['id']}")
    expect(viewer.locator("text=Simulate a payment (sandbox)")).to_have_count(0)
    expect(viewer.locator("summary", has_text="Refund")).to_have_count(0)
    viewer.goto(server.base_url + "/dashboard/api-keys")
    expect(viewer.get_by_role("heading", name="Not allowed")).to_be_visible()
    _checked(pages, viewer, "a viewer refused")
    assert not pages.console_errors, pages.console_errors


def test_the_dashboard_works_without_javascript_and_fits_a_phone(server, pages, browser):
    url = json.loads(_flask(server, "users", "invite", "--store", server.store_id, "--email", "phone@lumen.test",
                            "--json"))["invitation_url"]
    context = browser.new_context(viewport=PHONE, java_script_enabled=False, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        page.goto(server.base_url + "/dashboard/")
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
        pages.screenshot(page, "dashboard-login-phone")       # axe needs JavaScript: checked in the test above
        page.goto(url)
        page.fill("#password", PASSWORD)
        page.fill("#password_again", PASSWORD)
        page.click("button[type=submit].primary")
        expect(page.get_by_role("heading", name="Lumen Coffee")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        for path in ("/dashboard/invoices", "/dashboard/payment-links", "/dashboard/settings"):
            page.goto(server.base_url + path)
            assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], path
        page.click("text=Sign out")
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    finally:
        context.close()
