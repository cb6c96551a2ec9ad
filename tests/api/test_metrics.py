"""GET /metrics: Prometheus text of the whole service, behind the operator credentials."""
import base64

import pytest

from tests.support.prometheus import OPERATOR, scrape


def test_metrics_do_not_exist_without_operator_credentials(client):
    response = client.get("/metrics", headers=OPERATOR)
    assert response.status_code == 404 and response.json["error"]["code"] == "route_not_found"


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Basic " + base64.b64encode(b"ops:wrong").decode()},
                                     {"Authorization": "Bearer sk_live_" + "0" * 40}])
def test_metrics_refuse_anything_but_the_operator_with_a_json_401(client, operator_app, headers):
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 401
    assert response.json["error"]["code"] == "invalid_operator_credentials"
    assert response.headers["WWW-Authenticate"].startswith("Basic")


def test_requests_and_invoice_moves_are_counted_with_latency_histograms(client, auth, operator_app):
    invoice = client.post("/v1/invoices", json={"amount": "5.00"}, headers=auth).json
    client.post(f"/v1/invoices/{invoice['id']}/cancel", headers=auth)
    client.get("/v1/invoices/inv_nope", headers=auth)
    client.get("/no/such/route")

    metrics = scrape(client)

    assert metrics['tender_http_requests_total{method="POST",route="/v1/invoices",status="201"}'] == 1
    assert metrics['tender_http_requests_total{method="GET",route="/v1/invoices/<invoice_id>",status="404"}'] == 1
    assert metrics['tender_http_requests_total{method="GET",route="unmatched",status="404"}'] == 1
    assert metrics['tender_invoice_moves_total{trigger="create",status="pending"}'] == 1
    assert metrics['tender_invoice_moves_total{trigger="cancel",status="cancelled"}'] == 1
    labels = 'method="POST",route="/v1/invoices",status="201"'
    buckets = [value for key, value in metrics.items()
               if key.startswith("tender_http_request_duration_seconds_bucket{" + labels)]
    assert buckets == sorted(buckets) and buckets[-1] == 1          # cumulative, ending at the count
    assert metrics["tender_http_request_duration_seconds_count{" + labels + "}"] == 1
    assert metrics["tender_http_request_duration_seconds_sum{" + labels + "}"] > 0


def test_queue_depths_are_reported_for_every_queue(client, operator_app):
    metrics = scrape(client)
    for queue in ("webhooks", "chain", "settlement", "maintenance"):
        for state in ("queued", "started", "failed", "scheduled", "deferred"):
            assert f'tender_queue_jobs{{queue="{queue}",state="{state}"}}' in metrics
