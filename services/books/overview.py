"""The dashboard's home page (docs/dashboard.md#home): payments per currency, today and over the last
7 UTC days, read from the settlement roll-up (`settlement_day`: a handful of rows, whatever the
store's volume, never a scan of invoices), and what needs the merchant's attention."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

from peewee import fn

from models.refunds import Refund
from models.settlement_days import SettlementDay
from models.stores import Store
from models.webhooks import WebhookEndpoint

WEEK_DAYS = 7


def payments_by_currency(store: Store, today: dt.date) -> list[dict]:
    """[{currency, today_count, today_amount, week_count, week_amount}], by currency code."""
    totals: dict[str, dict] = {}
    for row in _week_days(store.id, today):
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
    return {"endpoints": list(_endpoints_in_trouble(store.id)),
            "refunds_awaiting_funds": _refunds_awaiting_funds(store.id).scalar(),
            "missing_payout_wallet": not store.payout_wallet}


def home_queries(store_id, today: dt.date) -> list:
    """Every query the home page makes, for the benchmark's EXPLAIN (bench/dashboard_pages.py)."""
    return [_week_days(store_id, today), _endpoints_in_trouble(store_id), _refunds_awaiting_funds(store_id)]


def _week_days(store_id, today: dt.date):
    first = today - dt.timedelta(days=WEEK_DAYS - 1)
    return SettlementDay.select(SettlementDay.day, SettlementDay.currency, SettlementDay.invoices_paid,
                                SettlementDay.gross_paid).where(
        (SettlementDay.store == store_id) & (SettlementDay.day >= first) & (SettlementDay.day <= today))


def _endpoints_in_trouble(store_id):
    return WebhookEndpoint.select().where(
        (WebhookEndpoint.store == store_id)
        & (WebhookEndpoint.failing_since.is_null(False) | (WebhookEndpoint.enabled == False))  # noqa: E712
    ).order_by(WebhookEndpoint.created_at).limit(20)


def _refunds_awaiting_funds(store_id):
    """A count over the refunds awaiting funds alone (the index `refund_awaiting_funds`), never over
    the store's refunds: those only grow, while a funding window closes within the hour."""
    return Refund.select(fn.COUNT(Refund.id)).where((Refund.store == store_id) & (Refund.status == "awaiting_funds"))
