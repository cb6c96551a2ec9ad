"""scripts/ci_total.py: the closing line of .ci/run totals every suite."""
import subprocess
import sys

from scripts.ci_total import totals
from tests.support.node_tools import ROOT

EMBEDDED = '<testsuites><testsuite tests="10" failures="1" errors="1" skipped="3"/></testsuites>'
POSTGRESQL = '<testsuite tests="5" failures="0" errors="0" skipped="0"/>'
# PHPUnit's report: suites inside suites, each carrying the totals of what it holds.
PHPUNIT = ('<testsuites><testsuite name="" tests="7" failures="1" errors="0" skipped="1">'
           '<testsuite name="plugin" tests="7" failures="1" errors="0" skipped="1">'
           '<testsuite name="ReceiverTest" tests="4" failures="1" errors="0" skipped="0"/>'
           '<testsuite name="CheckoutTest" tests="3" failures="0" errors="0" skipped="1"/>'
           '</testsuite></testsuite></testsuites>')


def test_totals_add_every_pytest_report_and_every_other_suite(tmp_path):
    (tmp_path / "embedded.xml").write_text(EMBEDDED)
    (tmp_path / "postgresql.xml").write_text(POSTGRESQL)
    (tmp_path / "fuzz.rc").write_text("1\n")
    assert totals(tmp_path) == (5 + 5, 2 + 1, 3)


def test_phpunit_nested_suites_count_once(tmp_path):
    (tmp_path / "phpunit.xml").write_text(PHPUNIT)
    (tmp_path / "postgresql.xml").write_text(POSTGRESQL)
    assert totals(tmp_path) == (5 + 5, 1, 1)


def test_the_line_is_the_plain_one_ci_tools_read(tmp_path):
    (tmp_path / "postgresql.xml").write_text(POSTGRESQL)
    (tmp_path / "fuzz.rc").write_text("0\n")
    out = subprocess.run([sys.executable, "scripts/ci_total.py", str(tmp_path)], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    assert out == "ci: 6 passed, 0 failed, 0 skipped\n"


def test_fuzz_output_keeps_no_pytest_style_closing_line(capsys):
    """schemathesis's closing banner counts no test; CI must read .ci/run's total instead."""
    from scripts.fuzz import print_without_closing_line
    print_without_closing_line("Test cases:\n  3315 generated, 3315 passed\n"
                               "============================= 3 warnings in 44.63s =============================\n")
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "fuzz: schemathesis finished after 44.63 s (3 warnings)"
    assert not any(line.startswith("=") for line in lines)
