"""scripts/cluster_report.py and scripts/cluster_needs.py: how `make cluster-check` judges a run
against its budgets, and names what the machine lacks (no cluster needed)."""
from scripts import cluster_needs, cluster_report

WITHIN = {"fault": "redis primary kill -9", "pay_to_invoice_paid_p50_s": 2.1, "pay_to_invoice_paid_max_s": 9.5,
          "longest_refused_retry_s": 0.0, "requests_refused": 0, "payments_lost": 0, "events_lost": 0,
          "events_duplicated": 0, "unfinished": [], "every_invoice_settled": True}


def test_a_retry_window_runs_from_the_first_failure_to_the_success():
    assert cluster_report.refused_window([], 12.0) == 0.0
    assert cluster_report.refused_window([15.0, 15.4, 15.8], 17.25) == 2.2


def test_each_budget_and_each_loss_fails_a_fault():
    assert cluster_report.over_budget(WITHIN) == []
    assert cluster_report.over_budget({**WITHIN, "pay_to_invoice_paid_max_s": 15.1}) == [
        "pay_to_invoice_paid_max_s 15.1 > 15"]
    assert cluster_report.over_budget({**WITHIN, "pay_to_invoice_paid_p50_s": 5.2, "longest_refused_retry_s": 60.3,
                                       "events_lost": 1}) == [
        "pay_to_invoice_paid_p50_s 5.2 > 5", "longest_refused_retry_s 60.3 > 15", "events_lost 1"]
    # at least once: an event received twice is shown, not failed
    assert cluster_report.over_budget({**WITHIN, "events_duplicated": 1}) == []
    assert "events received twice 1" in cluster_report.fault_line({**WITHIN, "events_duplicated": 1})
    assert cluster_report.over_budget({**WITHIN, "pay_to_invoice_paid_p50_s": None})      # nothing measured


def test_every_run_is_printed_and_one_over_budget_fails_the_check():
    good = {"faults": [WITHIN]}
    slow = {"faults": [{**WITHIN, "pay_to_invoice_paid_max_s": 43.0}]}
    text = cluster_report.summary([good, slow, {"error": "TimeoutError: the run's ceiling"}])
    assert text.splitlines()[0] == "run 1: PASS"
    assert "run 2: FAIL" in text and "pay_to_invoice_paid_max_s 43.0 > 15" in text
    assert "run 3: FAIL (TimeoutError: the run's ceiling)" in text
    assert cluster_report.summary([slow], first=4).startswith("run 4: FAIL")
    assert text.splitlines()[-1].startswith("cluster-check: 1 of 3 runs within budget")
    assert [cluster_report.run_passed(run) for run in (good, slow)] == [True, False]
    doubled = {**good, "totals": {"invoices_doubled": 1}}
    assert not cluster_report.run_passed(doubled)
    assert "invoices created twice: 1" in cluster_report.summary([doubled])


def test_missing_programs_are_named_with_their_packages_in_one_line():
    absent = cluster_needs.missing({"haproxy": "haproxy", "sh": "dash", "/nonexistent/initdb": "postgresql-15"},
                                   which=lambda name: None if name == "haproxy" else f"/usr/bin/{name}")
    assert absent == {"haproxy": "haproxy", "/nonexistent/initdb": "postgresql-15"}
    assert cluster_needs.needs_line(absent) == "cluster: needs haproxy, initdb (Debian packages: haproxy postgresql-15)"
