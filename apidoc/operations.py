"""Every route of the API, one entry each: what the document says about it beyond what the code
already tells (auth, scopes and error shapes are read from the view's decorators; path parameters
from the URL rule). A route that is not here fails tests/apidoc/test_openapi.py.

A new route is one entry: `("GET", "/v1/things/<thing_id>"): Op("Get a thing", "Things", ThingSchema)`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from core.platforms import PLATFORMS
from schemas.common import ListQuerySchema
from schemas.exports import InvoiceExportQuerySchema, SettlementReportQuerySchema, SettlementStatementSchema, \
    TransactionExportQuerySchema
from schemas.health import HealthSchema
from schemas.integrations import IntegrationConnectionSchema, IntegrationStatusSchema, connect_schema
from schemas.invoices import (InvoiceCreatedSchema, InvoiceCreateSchema, InvoiceListQuerySchema, InvoiceSchema,
                              InvoiceStatusPollSchema)
from schemas.notifications import NotificationSettingsSchema, NotificationSettingsUpdateSchema
from schemas.payment_links import (CheckoutResultSchema, CheckoutSchema, PaymentLinkCreateSchema,
                                   PaymentLinkInvoiceSchema, PaymentLinkListQuerySchema, PaymentLinkPublicSchema,
                                   PaymentLinkSchema, PaymentLinkUpdateSchema)
from schemas.payments import AssetSchema, BuyerSimulatedPaymentSchema, PublicInvoiceViewSchema, \
    QuoteCreateSchema, QuoteResultSchema, SimulatedPaymentSchema
from schemas.refunds import FundRefundSchema, PublicRefundSchema, RefundCreateSchema, RefundListQuerySchema, \
    RefundSchema
from schemas.transactions import TransactionListQuerySchema, TransactionSchema
from schemas.webhooks import (DeliveryListQuerySchema, EventListQuerySchema, EventSchema,
                              WebhookDeliveryDetailSchema, WebhookDeliverySchema, WebhookEndpointCreateSchema,
                              WebhookEndpointDeletedSchema, WebhookEndpointSchema, WebhookEndpointUpdatedSchema,
                              WebhookEndpointUpdateSchema, WebhookEndpointWithSecretSchema, WebhookReplayCreateSchema,
                              WebhookReplaySchema)


@dataclass(frozen=True)
class Page:
    """A response in the pagination envelope {data, has_more, next_cursor} of `item` schemas."""
    item: type


@dataclass(frozen=True)
class Items:
    """A response `{data: [item]}` without paging."""
    item: type


@dataclass(frozen=True)
class Op:
    summary: str
    tag: str
    response: object                    # a marshmallow Schema class, Page(...), Items(...) or a JSON schema dict
    status: int = 200
    body: type | None = None            # request body schema (JSON)
    query: type | None = None           # query string schema
    headers: tuple = ()                 # names of request header parameters in components.parameters
    errors: dict = field(default_factory=dict)    # status -> description, beyond the derived ones
    links: dict = field(default_factory=dict)     # link name -> (operationId, {parameter: expression})
    description: str = ""
    no_database: bool = False           # cannot answer 503 "database unavailable"
    media_types: tuple = ("application/json",)    # of the success response


# Path parameters, by the name the URL rules give them: (description, JSON schema).
_ID = "^{prefix}[0-9a-z]{{20,32}}$"
PATH_PARAMETERS = {
    "invoice_id": ("An invoice id (`inv_…`).", {"type": "string", "pattern": _ID.format(prefix="inv_")}),
    "transaction_id": ("A transaction id (`txn_…`).", {"type": "string", "pattern": _ID.format(prefix="txn_")}),
    "transaction_hash": ("The on-chain transaction hash, as the transaction object shows it.",
                         {"type": "string", "minLength": 1, "maxLength": 256}),
    "link_id": ("A payment link id (`plink_…`).", {"type": "string", "pattern": _ID.format(prefix="plink_")}),
    "token": ("A payment link's buyer token (`plpub_…`; legacy 12-character tokens still resolve).",
              {"type": "string", "pattern": "^plpub_[0-9a-z]{12,32}$"}),
    "endpoint_id": ("A webhook endpoint id (`wh_…`).", {"type": "string", "pattern": _ID.format(prefix="wh_")}),
    "delivery_id": ("A webhook delivery id (`whd_…`).", {"type": "string", "pattern": _ID.format(prefix="whd_")}),
    "event_id": ("An event id (`evt_…`).", {"type": "string", "pattern": _ID.format(prefix="evt_")}),
    "refund_id": ("A refund id (`ref_…`).", {"type": "string", "pattern": _ID.format(prefix="ref_")}),
}

# The id prefix of each paged item: list cursors (`starting_after`, `ending_before`) take those ids.
CURSOR_PREFIXES = {InvoiceSchema: "inv_", TransactionSchema: "txn_", PaymentLinkSchema: "plink_",
                   PaymentLinkInvoiceSchema: "inv_", WebhookEndpointSchema: "wh_", WebhookDeliverySchema: "whd_",
                   EventSchema: "evt_", RefundSchema: "ref_"}

_INVOICE_LINKS = {
    "GetInvoice": ("get_invoice", {"invoice_id": "$response.body#/id"}),
    "GetInvoiceStatus": ("get_invoice_status", {"invoice_id": "$response.body#/id"}),
    "CancelInvoice": ("cancel_invoice", {"invoice_id": "$response.body#/id"}),
    "ListInvoiceTransactions": ("list_invoice_transactions", {"invoice_id": "$response.body#/id"}),
}
_LINK_LINKS = {name: (operation, {"link_id": "$response.body#/id"}) for name, operation in (
    ("GetPaymentLink", "get_payment_link"), ("UpdatePaymentLink", "update_payment_link"),
    ("ActivatePaymentLink", "activate_payment_link"), ("DeactivatePaymentLink", "deactivate_payment_link"),
    ("ListPaymentLinkInvoices", "list_payment_link_invoices"),
    ("ListPaymentLinkTransactions", "list_payment_link_transactions"))}
_LINK_LINKS.update({
    "GetPublicPaymentLink": ("get_public_payment_link", {"token": "$response.body#/public_id"}),
    "CheckoutPaymentLink": ("checkout_payment_link", {"token": "$response.body#/public_id"}),
})
_ENDPOINT_LINKS = {name: (operation, {"endpoint_id": "$response.body#/id"}) for name, operation in (
    ("GetWebhookEndpoint", "get_endpoint"), ("UpdateWebhookEndpoint", "update_endpoint"),
    ("DeleteWebhookEndpoint", "delete_endpoint"), ("RotateWebhookSecret", "rotate_secret"),
    ("ListWebhookDeliveries", "list_deliveries"))}

# The two routes that simulate a buyer's payment, which only the sandbox provider has.
_SANDBOX_ONLY = "Exists only with `SWAP_PROVIDER=sandbox` (404 otherwise)"
_THEN_THE_JOBS = "the ordinary polling and settlement jobs then move the invoice."

_EXPORT_MEDIA = ("text/csv", "application/x-ndjson")
_EXPORT_FILE = {"type": "string", "description": "CSV with a header line (`format=csv`), or one JSON object a "
                                                 "line (`format=jsonl`).",
                "example": "id,external_order_id,status,...\r\ninv_...,order-1001,paid,...\r\n"}

_REFUND_LINKS = {name: (operation, {"refund_id": "$response.body#/id"}) for name, operation in (
    ("GetRefund", "get_refund"), ("CancelRefund", "cancel_refund"))}
_CHECKOUT_503 = ("`checkout_unavailable`: the swap provider cannot quote right now; `exchange_rate_unavailable`: "
                 "the invoice's currency has no usable exchange rate right now (docs/currencies.md); see "
                 "`Retry-After`.")

OPERATIONS = {
    ("GET", "/health"): Op(
        "Service health", "Health", HealthSchema, no_database=True,
        errors={503: ("The database is unreachable (same body, `components.database: unavailable`).",
                      HealthSchema)},
        description="Unversioned and unauthenticated. 200 while the database answers; Redis only degrades, "
                    "and so does a swap provider refusing Tender's credentials (`components.provider`)."),
    ("GET", "/v1/openapi.json"): Op(
        "This OpenAPI document", "Meta", {"type": "object"}, no_database=True),

    ("POST", "/v1/invoices"): Op(
        "Create an invoice", "Invoices", InvoiceCreatedSchema, status=201, body=InvoiceCreateSchema,
        links=_INVOICE_LINKS,
        errors={409: "`EXTERNAL_ORDER_INTEGRATION_CONFLICT`: an integration key's order already has an open or "
                     "paid invoice; `details.invoice_id` names it."},
        description="Errors 400/403/409/429 use the legacy shape `{error, code, details}` (spec: Errors)."),
    ("GET", "/v1/invoices"): Op(
        "List invoices, newest first", "Invoices", Page(InvoiceSchema), query=InvoiceListQuerySchema,
        links={"GetFirstInvoice": ("get_invoice", {"invoice_id": "$response.body#/data/0/id"})},
        description="Without date filters a 90-day window applies."),
    ("GET", "/v1/invoices/<invoice_id>"): Op("Get an invoice", "Invoices", InvoiceSchema),
    ("GET", "/v1/invoices/<invoice_id>/status"): Op("Poll an invoice's status", "Invoices", InvoiceStatusPollSchema),
    ("POST", "/v1/invoices/<invoice_id>/cancel"): Op(
        "Cancel an open invoice", "Invoices", InvoiceSchema,
        errors={400: "`invoice_not_cancellable`: the invoice is not open any more.",
                409: "`invoice_not_cancellable`: the provider already knows a deposit to its address.",
                503: "`provider_unavailable`: the provider could not rule a deposit out; retry after `Retry-After`."}),
    ("GET", "/v1/invoices/<invoice_id>/transactions"): Op(
        "Transactions of an invoice", "Invoices", Items(TransactionSchema)),

    ("POST", "/v1/invoices/<invoice_id>/refunds"): Op(
        "Refund a paid invoice, in part or whole", "Refunds", RefundSchema, status=201, body=RefundCreateSchema,
        links=_REFUND_LINKS,
        errors={400: "`invoice_not_refundable` (not paid and settled), `refund_exceeds_refundable` (more than "
                     "the invoice still has to refund), `unsupported_asset`, `payout_wallet_not_configured` or "
                     "`validation_error` (`refund_to` missing or not an address of the asset's network).",
                403: "`integration_key_forbidden`: an integration key refunds only its installation's invoices.",
                503: "`provider_unavailable`: the swap provider cannot quote the refund now; retry later."},
        description="Quotes a swap from the store's payout asset to the buyer's asset and answers with what "
                    "the merchant must send (`funding`): send exactly `funding.amount` of `funding.asset` to "
                    "`funding.deposit_address` (with `funding.deposit_memo` where not null) before "
                    "`funding.expires_at`. Refunds of one invoice never add up to more than it received."),
    ("GET", "/v1/invoices/<invoice_id>/refunds"): Op(
        "Refunds of an invoice, newest first", "Refunds", Page(RefundSchema), query=RefundListQuerySchema),
    ("GET", "/v1/refunds"): Op(
        "List refunds, newest first", "Refunds", Page(RefundSchema), query=RefundListQuerySchema,
        links={"GetFirstRefund": ("get_refund", {"refund_id": "$response.body#/data/0/id"})},
        description="An integration key sees the refunds of its installation's invoices only."),
    ("GET", "/v1/refunds/<refund_id>"): Op("Get a refund", "Refunds", RefundSchema),
    ("POST", "/v1/refunds/<refund_id>/cancel"): Op(
        "Cancel a refund nobody funded yet", "Refunds", RefundSchema,
        errors={400: "`refund_not_cancellable`: the refund is not awaiting funds any more.",
                409: "`refund_not_cancellable`: the provider already knows funding sent to its address.",
                503: "`provider_unavailable`: the provider could not rule funding out; retry after `Retry-After`."},
        description="Frees the refund's amount. The address stays watched: funding that crossed the cancel "
                    "is recorded, and the provider sends it back to the payout wallet."),

    ("GET", "/v1/store/notifications"): Op(
        "The store's notification mail settings", "Store", NotificationSettingsSchema,
        description="Where the store's mail goes and which kinds it wants (docs/email.md). A store that "
                    "never chose has no recipients and every kind on."),
    ("PATCH", "/v1/store/notifications"): Op(
        "Change the store's notification mail settings", "Store", NotificationSettingsSchema,
        body=NotificationSettingsUpdateSchema,
        description="`recipients` replaces the list; `kinds` turns the kinds it names on or off. An address "
                    "that is not one is 400 `validation_error` naming it (`recipients[1]`)."),

    ("GET", "/v1/transactions"): Op(
        "List transactions", "Transactions", Page(TransactionSchema), query=TransactionListQuerySchema,
        links={"GetFirstTransaction": ("get_transaction", {"transaction_id": "$response.body#/data/0/id"}),
               "FindFirstTransactionByHash": ("get_transaction_by_hash",
                                              {"transaction_hash": "$response.body#/data/0/transaction_hash"})}),
    ("GET", "/v1/transactions/<transaction_id>"): Op("Get a transaction", "Transactions", TransactionSchema),
    ("GET", "/v1/transactions/by-hash/<path:transaction_hash>"): Op(
        "Find a transaction by its on-chain hash", "Transactions", TransactionSchema),

    ("POST", "/v1/payment-links"): Op(
        "Create a payment link", "Payment links", PaymentLinkSchema, status=201, body=PaymentLinkCreateSchema,
        links=_LINK_LINKS),
    ("GET", "/v1/payment-links"): Op(
        "List payment links", "Payment links", Page(PaymentLinkSchema), query=PaymentLinkListQuerySchema),
    ("GET", "/v1/payment-links/<link_id>"): Op("Get a payment link", "Payment links", PaymentLinkSchema),
    ("PATCH", "/v1/payment-links/<link_id>"): Op(
        "Update a payment link", "Payment links", PaymentLinkSchema, body=PaymentLinkUpdateSchema,
        description="Pricing fields cannot change once a checkout has started (400 `pricing_locked`)."),
    ("POST", "/v1/payment-links/<link_id>/activate"): Op(
        "Activate a payment link", "Payment links", PaymentLinkSchema,
        errors={400: "`activation_refused`: a completed single-use link cannot be activated."}),
    ("POST", "/v1/payment-links/<link_id>/deactivate"): Op(
        "Deactivate a payment link", "Payment links", PaymentLinkSchema),
    ("GET", "/v1/payment-links/<link_id>/invoices"): Op(
        "Invoices of a payment link", "Payment links", Page(PaymentLinkInvoiceSchema), query=ListQuerySchema),
    ("GET", "/v1/payment-links/<link_id>/transactions"): Op(
        "Transactions of a payment link's invoices", "Payment links", Page(TransactionSchema),
        query=ListQuerySchema),

    ("GET", "/v1/public/payment-links/<token>"): Op(
        "Buyer view of a payment link", "Buyer", PaymentLinkPublicSchema),
    ("POST", "/v1/public/payment-links/<token>/checkout"): Op(
        "Start a checkout of a payment link", "Buyer", CheckoutResultSchema, status=201, body=CheckoutSchema,
        errors={403: "`payment_link_unavailable` (inactive or completed link) or `payment_link_already_paid`.",
                409: "`invoice_already_committed`: a single-use link whose open invoice someone else already "
                     "committed (another asset or refund address, or none given); the link is free again once "
                     "that invoice expires or is cancelled.",
                503: _CHECKOUT_503},
        links={"GetCheckoutInvoice": ("get_invoice", {"invoice_id": "$response.body#/invoice_id"})}),

    ("GET", "/v1/public/assets"): Op(
        "Assets a buyer can pay in", "Buyer", Items(AssetSchema),
        description="Asset codes: `symbol` for a chain's native coin, `symbol.network` for tokens."),
    ("GET", "/v1/public/invoices/<invoice_id>"): Op(
        "Buyer view of an invoice", "Buyer", PublicInvoiceViewSchema,
        description="Buyer-safe fields only: no metadata, merchant ids or order references."),
    ("GET", "/v1/public/refunds/<refund_id>"): Op(
        "Funding view of a refund", "Buyer", PublicRefundSchema,
        description="What the funding page (`funding_url`) shows: the amount, what to send and where, and the "
                    "status. No buyer address, reason or merchant ids; the refund id is the secret."),
    ("POST", "/v1/public/invoices/<invoice_id>/quote"): Op(
        "Price an invoice in an asset, or commit to it", "Buyer", QuoteResultSchema, body=QuoteCreateSchema,
        errors={400: "`unsupported_asset`, `invoice_not_payable` or `validation_error`.",
                409: "`invoice_already_committed`: the invoice already has a deposit address for another asset or "
                     "refund address; they never change. The same commit repeated answers 200 with `quote: null`.",
                503: "`checkout_unavailable` or `service_unavailable`: the swap provider did not answer; "
                     "`exchange_rate_unavailable`: no usable rate for the invoice's currency now (never a stale "
                     "or made-up one). Retry after `Retry-After`."},
        description="`dry: true` (the default) prices only, and `estimate` shows the terms at today's exchange "
                    "rate; `dry: false` with `refund_to` issues the deposit address, fixes the rate and the "
                    "operator's fee on the invoice (`exchange_rate`, `payout_amount`, `fee_bps`, `fee_amount`) "
                    "and moves it to `awaiting_payment`."),
    ("POST", "/v1/public/invoices/<invoice_id>/simulate-payment"): Op(
        "Simulate the buyer's payment from the hosted page (sandbox only)", "Buyer", PublicInvoiceViewSchema,
        status=202, body=BuyerSimulatedPaymentSchema,
        errors={400: "`invoice_not_payable`: no deposit address yet, or the invoice is past paying."},
        description=f"{_SANDBOX_ONLY}; no API key, rate limited per IP like the other buyer writes. Records a "
                    f"simulated deposit of the quoted amount; {_THEN_THE_JOBS}"),
    ("POST", "/v1/test_helpers/invoices/<invoice_id>/pay"): Op(
        "Simulate a buyer's payment (sandbox only)", "Test helpers", InvoiceSchema, status=202,
        body=SimulatedPaymentSchema,
        errors={400: "`invoice_not_payable`: the invoice is past paying, or expired."},
        description=f"{_SANDBOX_ONLY}. Records a simulated deposit; {_THEN_THE_JOBS}"),

    ("POST", "/v1/test_helpers/refunds/<refund_id>/fund"): Op(
        "Simulate the merchant's funding of a refund (sandbox only)", "Test helpers", RefundSchema, status=202,
        body=FundRefundSchema,
        description=f"{_SANDBOX_ONLY}. `success` delivers to the buyer; `short` sends half (or `amount`), which "
                    "the provider sends back at the deadline; `failed` makes the refund swap fail, and the "
                    "provider sends the funding back to the payout wallet. The ordinary refund poller then "
                    "moves the refund."),

    ("POST", "/v1/webhook-endpoints"): Op(
        "Create a webhook endpoint", "Webhooks", WebhookEndpointWithSecretSchema, status=201,
        body=WebhookEndpointCreateSchema, links=_ENDPOINT_LINKS,
        description="The response carries the signing `secret`, once."),
    ("GET", "/v1/webhook-endpoints"): Op(
        "List webhook endpoints", "Webhooks", Page(WebhookEndpointSchema), query=ListQuerySchema),
    ("GET", "/v1/webhook-endpoints/<endpoint_id>"): Op("Get a webhook endpoint", "Webhooks", WebhookEndpointSchema),
    ("PATCH", "/v1/webhook-endpoints/<endpoint_id>"): Op(
        "Update a webhook endpoint", "Webhooks", WebhookEndpointUpdatedSchema, body=WebhookEndpointUpdateSchema,
        description="`missed_events` is null unless this request re-enabled a disabled endpoint: then it counts "
                    "the subscribed events not received while it was failing or disabled, and gives the replay "
                    "call that sends them."),
    ("POST", "/v1/webhook-endpoints/<endpoint_id>/replay"): Op(
        "Replay events to an endpoint after an outage", "Webhooks", WebhookReplaySchema, status=202,
        body=WebhookReplayCreateSchema,
        links={"ListReplayDeliveries": ("list_deliveries", {"endpoint_id": "$response.body#/endpoint_id"})},
        errors={422: "`validation_error`: more than 10,000 events match (narrow `since`/`until` or `types`), "
                     "`until` not after `since`, or the endpoint is disabled; `unknown_event_type` in `types`."},
        description="A new delivery of every event the endpoint subscribes to (narrowed by `types`) created in "
                    "[`since`, `until`), at most 10,000 a call; sent and retried like any delivery."),
    ("DELETE", "/v1/webhook-endpoints/<endpoint_id>"): Op(
        "Delete a webhook endpoint", "Webhooks", WebhookEndpointDeletedSchema),
    ("POST", "/v1/webhook-endpoints/<endpoint_id>/rotate-secret"): Op(
        "Rotate an endpoint's signing secret", "Webhooks", WebhookEndpointWithSecretSchema,
        description="The old secret keeps signing (a second `v1=` value) for 24 hours."),
    ("GET", "/v1/webhook-endpoints/<endpoint_id>/deliveries"): Op(
        "Deliveries to an endpoint", "Webhooks", Page(WebhookDeliverySchema), query=DeliveryListQuerySchema,
        links={"GetFirstDelivery": ("get_delivery", {"delivery_id": "$response.body#/data/0/id"}),
               "RedeliverFirstDelivery": ("redeliver", {"delivery_id": "$response.body#/data/0/id"})}),
    ("GET", "/v1/webhook-deliveries/<delivery_id>"): Op(
        "Get a delivery with its attempts", "Webhooks", WebhookDeliveryDetailSchema),
    ("POST", "/v1/webhook-deliveries/<delivery_id>/redeliver"): Op(
        "Send a delivery again", "Webhooks", WebhookDeliveryDetailSchema, status=202),
    ("GET", "/v1/events"): Op(
        "List events", "Events", Page(EventSchema), query=EventListQuerySchema,
        links={"GetFirstEvent": ("get_event", {"event_id": "$response.body#/data/0/id"})}),
    ("GET", "/v1/events/<event_id>"): Op("Get an event", "Events", EventSchema),

    ("GET", "/v1/exports/invoices"): Op(
        "Export invoices (CSV or JSON Lines, streamed)", "Exports", _EXPORT_FILE, query=InvoiceExportQuerySchema,
        media_types=_EXPORT_MEDIA,
        description="The list's filters; `created_after` and `created_before` are required and at most 366 days "
                    "apart. Oldest first, every matching row, streamed. Columns: docs/exports.md."),
    ("GET", "/v1/exports/transactions"): Op(
        "Export transactions (CSV or JSON Lines, streamed)", "Exports", _EXPORT_FILE,
        query=TransactionExportQuerySchema, media_types=_EXPORT_MEDIA,
        description="The list's filters plus a required `created_after`/`created_before` range (at most 366 "
                    "days). Oldest first, every matching row, streamed. Columns: docs/exports.md."),
    ("GET", "/v1/reports/settlements"): Op(
        "Daily settlement statement", "Reports", SettlementStatementSchema, query=SettlementReportQuerySchema,
        description="Per UTC day and invoice currency, `from` to `to` inclusive (at most 366 days); days "
                    "without movement have no row. `received` sums the settlement transactions the "
                    "transactions export lists."),
}


def _integration_operations(platform: str) -> dict:
    """The three routes blueprints/integrations.py builds for each storefront platform."""
    base = f"/v1/integration/{platform}"
    return {
        ("POST", f"{base}/connect"): Op(
            f"Connect (or reconnect) a {platform} store", "Integrations", IntegrationConnectionSchema,
            body=connect_schema(platform),
            errors={409: "`INTEGRATION_SITE_CONFLICT`: the store's active installation is another site."},
            description="With a bootstrap key (first connect) or the dedicated key (reconnect: new key and "
                        "secret, the old key revoked at once). The response carries the key and secret once. "
                        "Safe to retry: the same bootstrap key with the same `site_url` and `webhook_url` within "
                        "15 minutes of its first use reconnects (`credentials_rotated: true`, the unseen "
                        "credentials revoked at once), until those credentials are first used or the store "
                        "disconnects; any other reuse of a spent bootstrap key is 401 `invalid_api_key`."),
        ("POST", f"{base}/disconnect"): Op(
            "Disconnect the store's installation", "Integrations",
            {"type": "object", "required": ["disconnected"], "properties": {"disconnected": {"type": "boolean"}}},
            errors={403: "Only a dedicated integration key disconnects: any other kind of key is "
                         "`INSUFFICIENT_SCOPE`, even one stored with `woocommerce:disconnect`.",
                    404: "`integration_not_found`: the store is not connected."}),
        ("GET", f"{base}/status"): Op("Connection state and payout readiness", "Integrations",
                                      IntegrationStatusSchema),
    }


for _platform in PLATFORMS:
    OPERATIONS.update(_integration_operations(_platform))
