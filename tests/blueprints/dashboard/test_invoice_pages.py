"""The invoice list's filters: the API's own (status, created range, payment link), search by id
and order id, keyset pages that keep the filters, and refused filters said on the form."""
from __future__ import annotations

import datetime as dt
import html
import re

import pytest

from core.clock import utcnow
from tests import factories
from tests.blueprints.dashboard.conftest import SCRIPT

_ROW = re.compile(r'/dashboard/invoices/(inv_[A-Za-z0-9]+)"')
_OLDER = re.compile(r'<a href="([^"]+)">Older invoices</a>')


def _listed(answer) -> list[str]:
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return _ROW.findall(answer.get_data(as_text=True))


def test_the_created_range_the_status_and_the_payment_link_narrow_the_list(owner_client, store):
    now = utcnow()
    link = factories.make_payment_link(store)
    old = factories.make_invoice(store, now=now - dt.timedelta(days=10))
    paid = factories.make_invoice(store, now=now - dt.timedelta(days=3), status="paid")
    linked = factories.make_invoice(store, now=now - dt.timedelta(days=3), payment_link_id=link.public_id)
    form = owner_client.get("/dashboard/invoices").get_data(as_text=True)
    for name in ("q", "status", "created_after", "created_before", "payment_link_id"):
        assert f'name="{name}"' in form, name
    day = lambda days: (now - dt.timedelta(days=days)).date().isoformat()        # as a date input sends it
    in_range = _listed(owner_client.get("/dashboard/invoices", query_string={
        "created_after": day(4), "created_before": day(1)}))
    assert sorted(in_range) == sorted([paid.public_id, linked.public_id])
    assert _listed(owner_client.get("/dashboard/invoices", query_string={
        "created_before": day(9)})) == [old.public_id]
    assert _listed(owner_client.get("/dashboard/invoices", query_string={"status": "paid"})) == [paid.public_id]
    assert _listed(owner_client.get("/dashboard/invoices", query_string={
        "payment_link_id": link.public_id})) == [linked.public_id]


def test_search_finds_an_order_id_and_opens_an_invoice_id(owner_client, store):
    wanted = factories.make_invoice(store, external_order_id="order-42")
    factories.make_invoice(store, external_order_id="order-43")
    assert _listed(owner_client.get("/dashboard/invoices", query_string={"q": "order-42"})) == [wanted.public_id]
    opened = owner_client.get("/dashboard/invoices", query_string={"q": wanted.public_id})
    assert opened.status_code == 302 and opened.headers["Location"].endswith(f"/dashboard/invoices/{wanted.public_id}")


def test_older_pages_keep_every_filter(owner_client, store, monkeypatch):
    from blueprints.dashboard import invoice_pages

    monkeypatch.setattr(invoice_pages, "PAGE_SIZE", 2)
    now = utcnow()
    link = factories.make_payment_link(store)
    mine = [factories.make_invoice(store, now=now - dt.timedelta(hours=i), payment_link_id=link.public_id,
                                   external_order_id="same")
            for i in range(1, 6)]
    factories.make_invoice(store, now=now - dt.timedelta(hours=2, minutes=30), external_order_id="same")  # no link
    query = {"q": "same", "payment_link_id": link.public_id,
             "created_after": (now - dt.timedelta(days=1)).date().isoformat()}
    seen, answer = [], owner_client.get("/dashboard/invoices", query_string=query)
    for _page in range(5):                       # bounded: 5 invoices, 2 a page
        seen += _listed(answer)
        older = _OLDER.search(answer.get_data(as_text=True))
        if older is None:
            break
        answer = owner_client.get(html.unescape(older.group(1)))
    assert seen == [invoice.public_id for invoice in mine]


@pytest.mark.parametrize("query, named", [
    ({"created_after": "last tuesday"}, "created_after"),
    ({"created_before": "2026-13-45"}, "created_before"),
    ({"payment_link_id": "inv_notalink"}, "payment_link_id"),
    ({"status": "lost"}, "status"),
    ({"starting_after": "inv_unknown0000"}, "starting_after"),
])
def test_a_refused_filter_is_said_on_the_form_not_a_500(owner_client, query, named):
    answer = owner_client.get("/dashboard/invoices", query_string=query)
    text = answer.get_data(as_text=True)
    assert answer.status_code == 400 and 'role="search"' in text and 'class="error"' in text
    assert named in text or "cursor" in text


def test_typed_filters_are_escaped_when_shown_again(owner_client, store):
    for query in ({"payment_link_id": SCRIPT}, {"created_after": SCRIPT}, {"q": SCRIPT, "status": "paid"}):
        answer = owner_client.get("/dashboard/invoices", query_string=query)
        text = answer.get_data(as_text=True)
        assert answer.status_code in (200, 400) and SCRIPT not in text and "&lt;script&gt;" in text, query
