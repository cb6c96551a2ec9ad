"""The dashboard's home page: payments today and over 7 days per currency, and what needs attention."""
from __future__ import annotations

from flask import g, render_template

from blueprints.dashboard import bp
from blueprints.dashboard.session_state import requires
from core import money
from core.clock import utcnow
from services.books import overview


@bp.get("/")
@requires("read")
def home():
    totals = [{**row, "today_amount": money.format_fiat(row["today_amount"], row["currency"]),
               "week_amount": money.format_fiat(row["week_amount"], row["currency"])}
              for row in overview.payments_by_currency(g.store, utcnow().date())]
    return render_template("dashboard/home.html", totals=totals, attention=overview.needs_attention(g.store))
