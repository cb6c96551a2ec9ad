"""The dashboard's home page (docs/dashboard.md#home): payments per currency, today and over the last
7 UTC days, read from the settlement roll-up (`settlement_day`: a handful of rows, whatever the
store's volume, never a scan of invoices), and what needs the merchant's attention."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

from models.refunds import Refund
from models.settlement_days import SettlementDay
from models.stores import Store
from models.webhooks import WebhookEndpoint

WEEK_DAYS = 7


def payments_by_currency(store: Store, today: dt.date) -> list[dict]:
    """[{currency, today_count, today_amount, week_count, week_amount}], by currency code."""
    first = today - dt.timedelta(days=WEEK_DAYS - 1)
    rows = SettlementDay.select(SettlementDay.day, SettlementDay.currency, SettlementDay.invoices_paid,
                                SettlementDay.gross_paid).where(
        (SettlementDay.store == store.id) & (SettlementDay.day >= first) & (SettlementDay.day <= today))
    totals: dict[str, dict] = {}
    for row in rows:
        entry = totals.setdefault(row.currency, {"currency": row.currency, "today_count": 0,
                                                 "today_amount": Decimal(0), "week_count": 0,
                                                 "week_amount": Decimal(0)})
        amount = Decimal(str(row.gross_paid or 0))
        entry["week_count"] += row.invoices_paid
        entry["week_amount"] += amount
        if row.day == today:
            entry["today_count"] += row.invoices_paid
            entry["today_amount"] += amount
    return [totals[code] for code in sorted(totals) if totals[code]["week_count"]]


def needs_attention(store: Store) -> dict:
    """Failing or disabled webhook endpoints, refunds waiting for the merchant's funds, no payout wallet."""
    endpoints = list(WebhookEndpoint.select().where(
        (WebhookEndpoint.store == store.id)
        & (WebhookEndpoint.failing_since.is_null(False) | (WebhookEndpoint.enabled == False))  # noqa: E712
    ).order_by(WebhookEndpoint.created_at).limit(20))
    awaiting = Refund.select().where((Refund.store == store.id) & (Refund.status == "awaiting_funds")).count()
    return {"endpoints": endpoints, "refunds_awaiting_funds": awaiting, "missing_payout_wallet": not store.payout_wallet}
