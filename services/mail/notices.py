"""Which facts become which mail, to whom (docs/email.md#what-is-sent-when).

Facts the engine records as events reach mail through `on_event`, called by the outbox
(services/engine/events.py) in the transaction that writes the event: one place for every
payment and refund fact. A webhook endpoint's disabling calls `endpoint_disabled` where it is
written. What time alone brings about (an endpoint failing for an hour, a refund's funding about
to expire) is found by `sweep`, run every minute by the scheduler.

Merchant mail goes only to the addresses of the store the fact belongs to, when it wants that kind;
buyer mail only to the address given for that invoice. Each mail's dedupe key names its fact, so
a fact reported again (a retried job, a second sweep) writes no second mail: buyers get one
receipt per invoice and one notice per refund.
"""
from __future__ import annotations

import datetime as dt
from urllib.parse import urlsplit

from core import money
from core.clock import isoformat
from models.invoices import Invoice
from models.mail import Mail
from models.refunds import Refund
from models.stores import Store
from models.webhooks import WebhookDelivery, WebhookEndpoint
from services.mail import store_notifications
from services.mail.mail_outbox import queue_mail

# The event kinds that are mail, and the mail they are.
MERCHANT_MAIL = {"invoice.paid": "payment_received", "invoice.underpaid": "invoice_underpaid",
                 "refund.created": "refund_awaiting_funds", "refund.succeeded": "refund_succeeded",
                 "refund.failed": "refund_failed"}
BUYER_MAIL = {"invoice.paid": "receipt", "refund.succeeded": "refund_sent"}
FAILING_FOR = dt.timedelta(hours=1)
REMIND_BEFORE = dt.timedelta(minutes=30)


def on_event(event_type: str, obj: dict, *, event_id: str, store_id, invoice_id, now: dt.datetime,
             invoice: Invoice | None = None) -> None:
    """Queue the mail an event means. `obj` is the invoice or refund as the event carries it;
    `invoice` the invoice row when the caller has it (a poll reads the invoice once: no second read)."""
    merchant_kind, buyer_kind = MERCHANT_MAIL.get(event_type), BUYER_MAIL.get(event_type)
    if merchant_kind is None and buyer_kind is None:
        return
    recipients = store_notifications.recipients_for(store_id, merchant_kind) if merchant_kind else []
    buyer = None
    if buyer_kind:
        buyer = invoice or (Invoice.select(Invoice.customer_email, Invoice.origin_asset)
                            .where(Invoice.id == invoice_id).first())
        if buyer is None or not buyer.customer_email:
            buyer = None
    if not recipients and buyer is None:
        return
    facts = _invoice_facts(obj) if event_type.startswith("invoice.") else _refund_facts(obj)
    context = {"store_name": Store.get_by_id(store_id).name, **facts}
    for address in recipients:
        queue_mail(merchant_kind, address, context, audience="merchant", store_id=store_id, now=now,
                   dedupe_key=f"{merchant_kind}:{event_id}:{address}")
    if buyer is not None:
        # One per invoice (a receipt) or per refund (a notice), whatever reports it again.
        buyer_context = {**context, "asset": context.get("asset") or buyer.origin_asset}
        queue_mail(buyer_kind, buyer.customer_email, buyer_context, audience="buyer", store_id=store_id, now=now,
                   dedupe_key=f"{buyer_kind}:{obj['id']}")


def _invoice_facts(obj: dict) -> dict:
    """What the templates show of an invoice, from its API shape (amounts written as the API writes them)."""
    return {"invoice_id": obj["id"], "amount": obj["amount"], "currency": obj["currency"],
            "paid_amount": obj.get("paid_amount"), "external_order_id": obj.get("external_order_id"),
            "transaction_hash": obj.get("transaction_hash"), "paid_at": obj.get("paid_at"),
            "expires_at": obj.get("expires_at"), "money": money.invoice_money_lines(obj)}


def _refund_facts(obj: dict) -> dict:
    """What the templates show of a refund, from its API shape."""
    funding = obj.get("funding") or {}
    return {"refund_id": obj["id"], "invoice_id": obj["invoice_id"], "amount": obj["amount"],
            "currency": obj["currency"], "asset": obj.get("asset"), "amount_out": obj.get("amount_out"),
            "refund_to": obj.get("refund_to"), "transaction_hash": obj.get("transaction_hash"),
            "failure_reason": obj.get("failure_reason"), "funding_amount": funding.get("amount"),
            "funding_asset": funding.get("asset"), "deposit_address": funding.get("deposit_address"),
            "deposit_memo": funding.get("deposit_memo"), "expires_at": funding.get("expires_at"),
            "funding_url": obj.get("funding_url")}


def endpoint_disabled(endpoint_id, reason: str, *, now: dt.datetime) -> None:
    """Tell the store an endpoint was disabled: call in the transaction that disables it."""
    endpoint = WebhookEndpoint.get_by_id(endpoint_id)
    _endpoint_mail("endpoint_disabled", endpoint, lambda: {"reason": reason}, f"{isoformat(now)}", now=now)


def _endpoint_mail(kind: str, endpoint: WebhookEndpoint, extra, occasion: str, *, now: dt.datetime) -> int:
    """Mail `kind` about `endpoint` to each of its store's addresses not yet told of this `occasion`;
    `extra()` (what only this kind shows) is read only when someone is left to tell."""
    keys = {address: f"{kind}:{endpoint.public_id}:{occasion}:{address}"
            for address in store_notifications.recipients_for(endpoint.store_id, kind)}
    told = {key for (key,) in Mail.select(Mail.dedupe_key).where(Mail.dedupe_key.in_(list(keys.values()))).tuples()}
    untold = [address for address, key in keys.items() if key not in told]
    if not untold:
        return 0
    context = {"store_name": Store.get_by_id(endpoint.store_id).name, "endpoint_id": endpoint.public_id,
               # the host only: a URL's path or query may carry the receiver's own token
               "endpoint_host": urlsplit(endpoint.url).hostname or "?", **extra()}
    return sum(queue_mail(kind, address, context, audience="merchant", store_id=endpoint.store_id, now=now,
                          dedupe_key=keys[address]) for address in untold)


def _last_error(endpoint: WebhookEndpoint) -> str | None:
    """What the endpoint's latest failed delivery was told, for the failing-endpoint mail."""
    return (WebhookDelivery.select(WebhookDelivery.last_error)
            .where((WebhookDelivery.endpoint == endpoint.id) & WebhookDelivery.last_error.is_null(False))
            .order_by(WebhookDelivery.updated_at.desc()).limit(1).scalar())


def sweep(*, now: dt.datetime) -> int:
    """Mail about time passing: endpoints failing for an hour (once per failing spell), refunds an
    unfunded half hour from their funding deadline (once each). Returns mails queued."""
    queued = 0
    failing = WebhookEndpoint.select().where(WebhookEndpoint.enabled & WebhookEndpoint.failing_since.is_null(False)
                                             & (WebhookEndpoint.failing_since <= now - FAILING_FOR))
    for endpoint in failing:
        since = isoformat(endpoint.failing_since)
        queued += _endpoint_mail("endpoint_failing", endpoint,
                                 lambda endpoint=endpoint, since=since: {"failing_since": since,
                                                                         "last_error": _last_error(endpoint)},
                                 since, now=now)
    expiring = Refund.select().where((Refund.status == "awaiting_funds") & (Refund.expires_at > now)
                                     & (Refund.expires_at <= now + REMIND_BEFORE))
    for refund in expiring:
        queued += _refund_reminder(refund, now=now)
    return queued


def _refund_reminder(refund: Refund, *, now: dt.datetime) -> int:
    from schemas.refunds import RefundSchema
    recipients = store_notifications.recipients_for(refund.store_id, "refund_funding_reminder")
    if not recipients:
        return 0
    context = reminder_context(Store.get_by_id(refund.store_id).name, RefundSchema().dump(refund))
    return sum(queue_mail("refund_funding_reminder", address, context, audience="merchant", store_id=refund.store_id,
                          now=now, dedupe_key=f"refund_funding_reminder:{refund.public_id}:{address}")
               for address in recipients)


def reminder_context(store_name: str, refund: dict) -> dict:
    """What a funding reminder says of `refund` (its API shape); the browser tests render one so."""
    return {"store_name": store_name, **_refund_facts(refund)}
