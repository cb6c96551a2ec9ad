"""One JSON line per request, with the key masked; no full key or secret in any line."""
import json
import logging

from bootstrap import JsonFormatter, redact


def _lines(caplog):
    formatter = JsonFormatter()
    return [json.loads(formatter.format(record)) for record in caplog.records if record.name == "tender.request"]


def test_each_request_logs_one_json_line_with_route_status_duration_and_masked_key(client, auth, api_key, caplog):
    with caplog.at_level(logging.INFO, logger="tender.request"):
        response = client.get("/v1/invoices/inv_00000000000000000000000000000000", headers=auth)

    [line] = _lines(caplog)
    assert line["request_id"] == response.headers["X-Request-Id"]
    assert line["route"] == "/v1/invoices/<invoice_id>"
    assert line["status"] == 404
    assert line["duration_ms"] >= 0
    assert line["api_key"] == f"sk_live_…{api_key[-4:]}"
    assert api_key not in json.dumps(line)


def test_redaction_masks_any_key_or_secret_a_message_might_carry(api_key):
    text = redact(f"oops {api_key} and whsec_{'ab' * 32}")
    assert api_key not in text and "whsec_abab" not in text
    assert f"sk_live_…{api_key[-4:]}" in text


def test_the_whole_run_key_leak_watch_is_reading_log_records(client, auth, key_leak_watch):
    seen = key_leak_watch.records_seen
    client.get("/v1/invoices", headers=auth)
    assert key_leak_watch.records_seen > seen    # the watch is live, so its final check means something
