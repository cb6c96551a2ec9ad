"""Every page of the dashboard, by its route, with the screenshot docs/dashboard.md shows of it: the
browser test (tests/browser/test_dashboard_pages.py) opens each and checks it with axe-core and the
keyboard, and tests/blueprints/dashboard/test_route_guards.py fails when a page route is missing here."""

PAGES = {
    "/dashboard/login": "dashboard-login",
    "/dashboard/password-reset": "dashboard-password-reset",
    "/dashboard/password-reset/<token>": "dashboard-new-password",
    "/dashboard/invitations/<token>": "dashboard-invitation",
    "/dashboard/stores": "dashboard-stores",
    "/dashboard/": "dashboard-home",
    "/dashboard/invoices": "dashboard-invoices",
    "/dashboard/invoices/<invoice_id>": "dashboard-invoice-unpaid",
    "/dashboard/payment-links": "dashboard-payment-links",
    "/dashboard/payment-links/new": "dashboard-payment-link-new",
    "/dashboard/payment-links/<link_id>": "dashboard-payment-link",
    "/dashboard/payment-links/<link_id>/edit": "dashboard-payment-link-edit",
    "/dashboard/refunds": "dashboard-refunds",
    "/dashboard/webhooks": "dashboard-webhooks",
    "/dashboard/webhooks/<endpoint_id>": "dashboard-webhook-endpoint",
    "/dashboard/webhooks/deliveries/<delivery_id>": "dashboard-webhook-delivery",
    "/dashboard/api-keys": "dashboard-api-keys",
    "/dashboard/books": "dashboard-books",
    "/dashboard/integrations": "dashboard-integrations",
    "/dashboard/settings": "dashboard-settings",
    "/dashboard/team": "dashboard-team",
    "/dashboard/audit": "dashboard-audit",
    "/dashboard/account": "dashboard-account",
    "/dashboard/account/totp": "dashboard-totp",
    "/dashboard/confirm": "dashboard-confirm",
}
# Answers that are files, not pages.
NOT_PAGES = {"/dashboard/books/<any(invoices, transactions):kind>.csv", "/dashboard/payment-links/<link_id>/qr.svg"}
# Taken by the walk in tests/browser/test_dashboard.py, whose store has been paid and refunded: the
# page test leaves them alone.
TAKEN_BY_THE_WALK = {"dashboard-totp", "dashboard-payment-link-new", "dashboard-payment-link", "dashboard-home",
                     "dashboard-refunds", "dashboard-webhook-endpoint", "dashboard-webhook-delivery",
                     "dashboard-api-keys", "dashboard-webhooks", "dashboard-books", "dashboard-settings",
                     "dashboard-audit", "dashboard-team"}
# Pages also shown at phone width.
PHONE_PAGES = {"/dashboard/": "dashboard-home-phone", "/dashboard/invoices": "dashboard-invoices-phone",
               "/dashboard/invoices/<invoice_id>": "dashboard-invoice-phone",
               "/dashboard/payment-links": "dashboard-payment-links-phone",
               "/dashboard/settings": "dashboard-settings-phone"}
# A page in another state: after asking for a reset link; a 404 and a 403 page.
STATES = ("dashboard-password-reset-sent", "dashboard-not-found", "dashboard-not-allowed")
