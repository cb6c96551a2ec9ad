"""GET /v1/invoices: newest first, keyset pages both ways (docs/api.md#pagination), filters, the 90-day window."""
import datetime as dt
import uuid

from playhouse.test_utils import count_queries
import pytest

from core.clock import utcnow
from tests import factories
from tests.blueprints.assertions import assert_error, assert_no_query_per_row, ids, list_page


def iso(value: dt.datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def make_series(store, count, *, start=None, step=dt.timedelta(minutes=1), **over):
    """`count` invoices, oldest first, `step` apart; returned newest first, as the API lists them."""
    start = start or utcnow() - dt.timedelta(days=1)
    invoices = [factories.make_invoice(store, now=start + i * step, **over) for i in range(count)]
    return [invoice.public_id for invoice in reversed(invoices)]


def list_invoices(client, auth, **query):
    return list_page(client, auth, "/v1/invoices", **query)


def test_envelope_newest_first_and_default_limit_of_twenty(client, auth, store):
    expected = make_series(store, 22)
    page = list_invoices(client, auth)
    assert set(page) == {"data", "has_more", "next_cursor"}
    assert ids(page) == expected[:20]
    assert page["has_more"] is True and page["next_cursor"] == expected[19]


def test_items_are_full_invoices(client, auth, store):
    invoice = factories.make_invoice(store)
    page = list_invoices(client, auth)
    assert page["data"] == [client.get(f"/v1/invoices/{invoice.public_id}", headers=auth).get_json()]


def test_only_the_keys_store_is_listed(client, auth, store, other_store):
    mine = make_series(store, 2)
    make_series(other_store, 3)
    assert ids(list_invoices(client, auth)) == mine


def test_empty_list(client, auth):
    assert list_invoices(client, auth) == {"data": [], "has_more": False, "next_cursor": None}


def test_starting_after_walks_forward_to_the_end(client, auth, store):
    e, d, c, b, a = make_series(store, 5)
    first = list_invoices(client, auth, limit=2)
    assert (ids(first), first["has_more"], first["next_cursor"]) == ([e, d], True, d)
    second = list_invoices(client, auth, limit=2, starting_after=first["next_cursor"])
    assert (ids(second), second["has_more"], second["next_cursor"]) == ([c, b], True, b)
    last = list_invoices(client, auth, limit=2, starting_after=second["next_cursor"])
    assert (ids(last), last["has_more"], last["next_cursor"]) == ([a], False, None)


def test_a_page_that_ends_exactly_at_the_end_has_no_more(client, auth, store):
    b, a = make_series(store, 2)
    page = list_invoices(client, auth, limit=2)
    assert (ids(page), page["has_more"], page["next_cursor"]) == ([b, a], False, None)
    assert list_invoices(client, auth, starting_after=a) == {"data": [], "has_more": False, "next_cursor": None}


def test_ending_before_returns_the_newer_page_still_newest_first(client, auth, store):
    e, d, c, b, a = make_series(store, 5)
    page = list_invoices(client, auth, limit=2, ending_before=a)
    # Newer than a: b, c, d, e. The two nearest a, newest first; more lie beyond them.
    assert (ids(page), page["has_more"], page["next_cursor"]) == ([c, b], True, b)
    newest = list_invoices(client, auth, limit=2, ending_before=c)
    assert (ids(newest), newest["has_more"], newest["next_cursor"]) == ([e, d], False, None)
    assert list_invoices(client, auth, ending_before=e)["data"] == []


def test_keyset_visits_every_row_once_when_created_at_ties(client, auth, store):
    expected = set(make_series(store, 7, step=dt.timedelta(0)))
    seen, cursor = [], None
    while True:
        page = list_invoices(client, auth, limit=3, **({"starting_after": cursor} if cursor else {}))
        seen += ids(page)
        if not page["has_more"]:
            break
        cursor = page["next_cursor"]
    assert len(seen) == 7 and set(seen) == expected
    # Backwards from the oldest, page by page, ends at the newest with the same seven.
    back, before = [], seen[-1]
    while True:
        page = list_invoices(client, auth, limit=3, ending_before=before)
        back = ids(page) + back
        if not page["data"]:
            break
        before = ids(page)[0]
    assert back + [seen[-1]] == seen


def test_both_cursors_at_once_is_refused(client, auth, store):
    b, a = make_series(store, 2)
    response = client.get("/v1/invoices", headers=auth, query_string={"starting_after": a, "ending_before": b})
    assert_error(response, 400, "validation_error")


@pytest.mark.parametrize("param", ["starting_after", "ending_before"])
@pytest.mark.parametrize("cursor_kind", ["unknown", "other_store", "malformed", "wrong_prefix", "uuid"])
def test_bad_cursors_are_invalid_cursor(client, auth, store, other_store, param, cursor_kind):
    mine = factories.make_invoice(store)
    cursor = {
        "unknown": "inv_" + "f" * 32,
        "other_store": factories.make_invoice(other_store).public_id,
        "malformed": "not-a-cursor",
        "wrong_prefix": "txn_" + mine.public_id[4:],
        "uuid": str(mine.id),
    }[cursor_kind]
    response = client.get("/v1/invoices", headers=auth, query_string={param: cursor})
    assert_error(response, 400, "invalid_cursor", param=param)


@pytest.mark.parametrize("limit", ["0", "101", "-1", "abc", "1.5", "", "1e2", "99999999999999999999"])
def test_limit_outside_one_to_hundred_or_not_an_integer_is_refused(client, auth, limit):
    response = client.get("/v1/invoices", headers=auth, query_string={"limit": limit})
    assert_error(response, 400, "validation_error", param="limit")


def test_limit_bounds_are_accepted(client, auth, store):
    newest = make_series(store, 3)[0]
    assert ids(list_invoices(client, auth, limit=1)) == [newest]
    assert len(list_invoices(client, auth, limit=100)["data"]) == 3


@pytest.mark.parametrize("param", ["colour", "page", "offset", "after", "store_id"])
def test_unknown_query_parameters_are_refused_naming_them(client, auth, param):
    response = client.get("/v1/invoices", headers=auth, query_string={param: "1"})
    assert_error(response, 400, "validation_error", param=param)


def test_status_filter(client, auth, store):
    open_id = factories.make_invoice(store).public_id
    paid_id = factories.make_invoice(store, status="paid").public_id
    assert ids(list_invoices(client, auth, status="paid")) == [paid_id]
    assert ids(list_invoices(client, auth, status="pending")) == [open_id]
    assert ids(list_invoices(client, auth, status="cancelled")) == []


def test_external_order_id_filter_is_exact(client, auth, store):
    wanted = factories.make_invoice(store, external_order_id="A1").public_id
    factories.make_invoice(store, external_order_id="A10")
    factories.make_invoice(store, external_order_id="a1")
    assert ids(list_invoices(client, auth, external_order_id="A1")) == [wanted]


def test_customer_id_filter(client, auth, store):
    customer = uuid.uuid4()
    wanted = factories.make_invoice(store, customer_id=customer).public_id
    factories.make_invoice(store, customer_id=uuid.uuid4())
    factories.make_invoice(store)
    assert ids(list_invoices(client, auth, customer_id=str(customer))) == [wanted]


def test_payment_link_id_filter(client, auth, store):
    link = "plink_" + "1" * 32
    wanted = factories.make_invoice(store, payment_link_id=link).public_id
    factories.make_invoice(store, payment_link_id="plink_" + "2" * 32)
    factories.make_invoice(store)
    assert ids(list_invoices(client, auth, payment_link_id=link)) == [wanted]


def test_created_after_is_inclusive_and_created_before_exclusive(client, auth, store):
    instant = utcnow().replace(microsecond=0) - dt.timedelta(days=2)
    before = factories.make_invoice(store, now=instant - dt.timedelta(seconds=1)).public_id
    at = factories.make_invoice(store, now=instant).public_id
    after = factories.make_invoice(store, now=instant + dt.timedelta(seconds=1)).public_id
    assert ids(list_invoices(client, auth, created_after=iso(instant))) == [after, at]
    assert ids(list_invoices(client, auth, created_before=iso(instant))) == [before]
    assert ids(list_invoices(client, auth, created_after=iso(instant),
                             created_before=iso(instant + dt.timedelta(seconds=1)))) == [at]


def test_date_filters_honour_the_utc_offset(client, auth, store):
    instant = utcnow().replace(microsecond=0) - dt.timedelta(days=2)
    at = factories.make_invoice(store, now=instant).public_id
    shifted = (instant + dt.timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S+02:00")
    assert ids(list_invoices(client, auth, created_after=shifted)) == [at]
    assert ids(list_invoices(client, auth, created_before=shifted)) == []


def test_paid_after_and_paid_before(client, auth, store):
    instant = utcnow().replace(microsecond=0) - dt.timedelta(days=1)
    early = factories.make_invoice(store, status="paid", paid_at=instant - dt.timedelta(hours=1)).public_id
    late = factories.make_invoice(store, status="paid", paid_at=instant).public_id
    factories.make_invoice(store)     # unpaid: matches no paid_* filter
    assert ids(list_invoices(client, auth, paid_after=iso(instant))) == [late]
    assert ids(list_invoices(client, auth, paid_before=iso(instant))) == [early]


@pytest.mark.parametrize("param, value", [
    ("status", "done"), ("status", "PAID"), ("status", ""),
    ("external_order_id", "x" * 129), ("external_order_id", ""),
    ("customer_id", "not-a-uuid"), ("customer_id", "123"),
    ("payment_link_id", "inv_" + "a" * 32), ("payment_link_id", "plink_short"),
    ("created_after", "yesterday"), ("created_after", "2026-13-01T00:00:00Z"),
    ("created_before", "2026-01-01T25:00:00Z"), ("created_before", ""),
    ("paid_after", "1700000000"), ("paid_before", "2026-02-30T00:00:00Z"),
    ("created_after", "0001-01-01T00:00:00+05:00"),   # the offset pushes it before year 1
    ("paid_before", "9999-12-31T23:59:59-05:00"),     # ... or after year 9999
    ("created_after", "2026-01-01T00:00:00Z" + "0" * 40),
])
def test_bad_filter_values_are_refused_naming_the_parameter(client, auth, param, value):
    response = client.get("/v1/invoices", headers=auth, query_string={param: value})
    assert_error(response, 400, "validation_error", param=param)


def test_the_default_window_hides_invoices_older_than_ninety_days(client, auth, store):
    now = utcnow()
    old = factories.make_invoice(store, now=now - dt.timedelta(days=91)).public_id
    recent = factories.make_invoice(store, now=now - dt.timedelta(days=89)).public_id
    assert ids(list_invoices(client, auth)) == [recent]
    assert ids(list_invoices(client, auth, created_after=iso(now - dt.timedelta(days=100)))) == [recent, old]
    # Any date filter replaces the default window.
    assert ids(list_invoices(client, auth, created_before=iso(now - dt.timedelta(days=90)))) == [old]


def test_the_default_window_does_not_apply_to_paid_filters(client, auth, store):
    now = utcnow()
    old = factories.make_invoice(store, now=now - dt.timedelta(days=120), status="paid",
                                 paid_at=now - dt.timedelta(days=119)).public_id
    assert ids(list_invoices(client, auth, paid_after=iso(now - dt.timedelta(days=200)))) == [old]


def test_filters_combine(client, auth, store):
    wanted = factories.make_invoice(store, status="paid", external_order_id="X").public_id
    factories.make_invoice(store, status="pending", external_order_id="X")
    factories.make_invoice(store, status="paid", external_order_id="Y")
    assert ids(list_invoices(client, auth, status="paid", external_order_id="X")) == [wanted]


def test_no_query_per_row(client, auth, store):
    make_series(store, 50)
    assert_no_query_per_row(client, auth, "/v1/invoices", rows=50)


def test_a_deep_page_costs_the_same_queries_as_the_first(client, auth, store):
    series = make_series(store, 30)

    def queries_for(**query):
        with count_queries() as counter:
            list_invoices(client, auth, limit=5, **query)
        return counter.count

    queries_for(starting_after=series[0])        # the key lookup is cached for a second from here on
    assert queries_for(starting_after=series[0]) == queries_for(starting_after=series[24])
