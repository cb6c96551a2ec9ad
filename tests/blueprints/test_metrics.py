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
    assert metrics['tender_invoice_moves_total{status="pending",trigger="create"}'] == 1
    assert metrics['tender_invoice_moves_total{status="cancelled",trigger="cancel"}'] == 1
    labels = 'method="POST",route="/v1/invoices",status="201"'
    buckets = [value for key, value in metrics.items()
               if key.startswith("tender_http_request_duration_seconds_bucket{") and key.endswith("," + labels + "}")]
    assert buckets == sorted(buckets) and buckets[-1] == 1          # cumulative, ending at the count
    assert metrics["tender_http_request_duration_seconds_count{" + labels + "}"] == 1
    assert metrics["tender_http_request_duration_seconds_sum{" + labels + "}"] > 0


def test_queue_depths_are_reported_for_every_queue(client, operator_app):
    metrics = scrape(client)
    for queue in ("webhooks", "chain", "settlement", "maintenance"):
        for state in ("queued", "started", "failed", "scheduled", "deferred"):
            assert f'tender_queue_jobs{{queue="{queue}",state="{state}"}}' in metrics


def test_client_input_never_becomes_a_label(client, auth, operator_app):
    """Methods outside the known set are `other`, unmatched paths one `unmatched` route: series
    stay a closed set whatever clients send."""
    before = scrape(client)
    for method in ("FOO", "BAR", "X" * 200):
        client.open("/v1/invoices", method=method, headers=auth)
        client.open("/v1/no/such/" + method, method=method, headers=auth)
    after = scrape(client)

    new_series = [key for key in after if key not in before and key.startswith("tender_http_requests_total")
                  and 'route="/metrics"' not in key]
    assert new_series and all('method="other"' in key for key in new_series)
    assert not any("FOO" in key or "BAR" in key or "XXX" in key or "/no/such" in key for key in after)
    assert len({key.split(",status=")[0] for key in new_series}) <= 2     # (other, /v1/invoices) and (other, unmatched)


def test_exposition_families_are_typed(client, operator_app):
    from prometheus_client.parser import text_string_to_metric_families

    text = client.get("/metrics", headers=OPERATOR).get_data(as_text=True)
    types = {family.name: family.type for family in text_string_to_metric_families(text)}
    assert types["tender_queue_jobs"] == "gauge"
    assert types["tender_http_requests"] == "counter"
    assert types["tender_http_request_duration_seconds"] == "histogram"


def _basic(user: str, password: str) -> dict:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def test_wrong_operator_credentials_are_limited_per_client(client, operator_app):
    """Ten wrong tries a minute per client; then 429 with Retry-After for the rest of the minute,
    the right credentials included (else a right guess would show), while other clients go on."""
    answers = [client.get("/metrics", headers=_basic("ops", f"guess-{n}")) for n in range(150)]
    statuses = [answer.status_code for answer in answers]
    assert statuses[:10] == [401] * 10 and set(statuses[10:]) == {429}
    refused = answers[-1]
    assert refused.json["error"]["code"] == "rate_limited" and 1 <= int(refused.headers["Retry-After"]) <= 60
    assert client.get("/metrics", headers=OPERATOR).status_code == 429
    elsewhere = client.get("/metrics", headers=OPERATOR, environ_base={"REMOTE_ADDR": "192.0.2.7"})
    assert elsewhere.status_code == 200


def test_an_ipv6_client_is_locked_out_across_its_slash_64(client, operator_app):
    statuses = [client.get("/metrics", headers=_basic("ops", f"guess-{n}"),
                           environ_base={"REMOTE_ADDR": f"2001:db8:5:6::{n + 1:x}"}).status_code for n in range(11)]
    assert statuses == [401] * 10 + [429]


def test_made_up_forwarded_addresses_do_not_lift_the_lockout(client, operator_app, monkeypatch, app):
    """Behind a trusted proxy (TRUSTED_PROXY_HOPS=1) a client that reaches the app directly can name
    any address in X-Forwarded-For; the failures still count for the one account, which locks too."""
    import dataclasses

    monkeypatch.setitem(app.extensions, "tender.settings",
                        dataclasses.replace(app.extensions["tender.settings"], trusted_proxy_hops=1))
    statuses = [client.get("/metrics", headers={**_basic("ops", f"guess-{n}"), "X-Forwarded-For": f"198.51.100.{n}"}
                           ).status_code for n in range(1, 41)]
    assert statuses[:30] == [401] * 30 and set(statuses[30:]) == {429}
    right = client.get("/metrics", headers={**OPERATOR, "X-Forwarded-For": "192.0.2.200"})
    assert right.status_code == 429 and 1 <= int(right.headers["Retry-After"]) <= 60


def test_a_bare_request_is_no_failure(client, operator_app):
    for _ in range(20):
        assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers=OPERATOR).status_code == 200


def test_the_metrics_content_type_names_its_charset_once(client, operator_app):
    content_type = client.get("/metrics", headers=OPERATOR).headers["Content-Type"]
    assert content_type.count("charset") == 1, content_type
