"""Another store's ids are a 404, a role without the right a 403 page, and whatever a merchant typed
is escaped on every page that shows it."""
from __future__ import annotations


from models.invoices import Invoice
from tests import factories
from tests.blueprints.dashboard.conftest import SCRIPT
from tests.support.dashboard import make_member, post, sign_in


def test_another_stores_invoice_is_a_404_to_read_and_to_cancel(owner_client, other_store):
    theirs = factories.make_invoice(other_store)
    assert owner_client.get(f"/dashboard/invoices/{theirs.public_id}").status_code == 404
    assert post(owner_client, f"/dashboard/invoices/{theirs.public_id}/cancel").status_code == 404
    assert Invoice.get_by_id(theirs.id).status == "pending"


def test_a_malformed_id_is_a_404_page(owner_client):
    answer = owner_client.get("/dashboard/invoices/inv_<b>")
    assert answer.status_code == 404 and "<b>" not in answer.get_data(as_text=True)


def test_a_viewer_reads_and_cannot_change(client, store):
    invoice = factories.make_invoice(store)
    make_member(store, "viewer@example.com", "viewer")
    sign_in(client, "viewer@example.com")
    page = client.get(f"/dashboard/invoices/{invoice.public_id}")
    assert page.status_code == 200 and "Cancel the invoice" not in page.get_data(as_text=True)
    for path in (f"/dashboard/invoices/{invoice.public_id}/cancel", f"/dashboard/invoices/{invoice.public_id}/refunds"):
        refused = post(client, path, {"amount": "1.00"})
        assert refused.status_code == 403 and "viewer" in refused.get_data(as_text=True)
    assert Invoice.get_by_id(invoice.id).status == "pending"


def test_an_owner_cancels_through_the_same_rule_as_the_api(owner_client, store):
    invoice = factories.make_invoice(store)
    answer = post(owner_client, f"/dashboard/invoices/{invoice.public_id}/cancel")
    assert answer.status_code == 302 and Invoice.get_by_id(invoice.id).status == "cancelled"
    again = post(owner_client, f"/dashboard/invoices/{invoice.public_id}/cancel")
    assert again.status_code == 400 and "only open invoices" in again.get_data(as_text=True)


def test_a_member_of_two_stores_picks_one_and_cannot_pick_a_stranger(client, store, other_store):
    make_member(store, "both@example.com", "owner")
    make_member(other_store, "both@example.com", "viewer")
    sign_in(client, "both@example.com")
    assert client.get("/dashboard/").headers["Location"].endswith("/dashboard/stores")
    stranger = factories.make_store(name="Stranger")
    post(client, "/dashboard/stores", {"store_id": str(stranger.id)}, form_page="/dashboard/stores")
    assert client.get("/dashboard/").headers["Location"].endswith("/dashboard/stores")
    post(client, "/dashboard/stores", {"store_id": str(other_store.id)}, form_page="/dashboard/stores")
    assert "Other shop" in client.get("/dashboard/").get_data(as_text=True)


def test_script_in_every_merchant_typed_field_is_escaped(owner_client, store):
    invoice = factories.make_invoice(store, external_order_id=SCRIPT, metadata={SCRIPT: SCRIPT})
    pages = [owner_client.get(f"/dashboard/invoices/{invoice.public_id}"),
             owner_client.get("/dashboard/invoices"),
             owner_client.get("/dashboard/invoices", query_string={"q": SCRIPT})]
    for page in pages:
        text = page.get_data(as_text=True)
        assert page.status_code == 200 and SCRIPT not in text and "&lt;script&gt;" in text



def test_simulate_a_payment_refund_and_cancel_the_refund_through_the_pages(owner_client, client, auth, other_store):
    from models.refunds import Refund
    from tests.payflow import run_pipeline

    invoice = client.post("/v1/invoices", json={"amount": "30.00"}, headers=auth).get_json()
    assert post(owner_client, f"/dashboard/invoices/{invoice['id']}/simulate-payment").status_code == 302
    run_pipeline()
    assert client.get(f"/v1/invoices/{invoice['id']}", headers=auth).get_json()["status"] == "paid"
    too_much = post(owner_client, f"/dashboard/invoices/{invoice['id']}/refunds", {"amount": "31.00"})
    assert too_much.status_code == 400 and Refund.select().count() == 0          # the API's own rule, in words
    assert post(owner_client, f"/dashboard/invoices/{invoice['id']}/refunds", {"amount": "10.00"}).status_code == 302
    refund = Refund.get()
    theirs = factories.make_refund(factories.make_invoice(other_store, status="paid"))
    assert post(owner_client, f"/dashboard/refunds/{theirs.public_id}/cancel").status_code == 404
    assert post(owner_client, f"/dashboard/refunds/{refund.public_id}/cancel").status_code == 302
    assert (Refund.get_by_id(refund.id).status, Refund.get_by_id(theirs.id).status) == ("cancelled", "awaiting_funds")
