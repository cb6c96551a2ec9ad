"""The closing line of .ci/run: `ci: N passed, N failed, N skipped` over every suite it ran.

Usage: python scripts/ci_total.py RESULTS_DIR. Each pytest run leaves a JUnit XML report there
(`--junitxml`), and so does PHPUnit (`--log-junit`, whose suites nest: only the outermost ones are
counted); every other suite (the contract fuzzing) leaves `<name>.rc`, its exit status, and
counts as one test."""
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def totals(results: Path) -> tuple[int, int, int]:
    passed = failed = skipped = 0
    for report in sorted(results.glob("*.xml")):
        root = ET.parse(report).getroot()
        for suite in ([root] if root.tag == "testsuite" else root.findall("testsuite")):
            tests, skips = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
            failures = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
            passed += tests - skips - failures
            failed += failures
            skipped += skips
    for status in sorted(results.glob("*.rc")):
        if status.read_text().strip() == "0":
            passed += 1
        else:
            failed += 1
    return passed, failed, skipped


if __name__ == "__main__":
    passed, failed, skipped = totals(Path(sys.argv[1]))
    print(f"ci: {passed} passed, {failed} failed, {skipped} skipped")
