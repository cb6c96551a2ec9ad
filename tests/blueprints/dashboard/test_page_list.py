"""The browser test of every dashboard page reads its list from tests/support/dashboard_pages.py:
a page route missing from it, or a screenshot docs/dashboard.md does not show, fails here."""
from __future__ import annotations

from pathlib import Path

from tests.support.dashboard_pages import (
    NOT_PAGES,
    PAGES,
    PHONE_PAGES,
    STATES,
    TAKEN_BY_THE_WALK,
)
from tests.support.dashboard_world import dashboard_rules

DOCS = Path(__file__).resolve().parents[3] / "docs"


def test_every_page_route_is_in_the_browser_tests_list(app):
    routes = {rule.rule for rule in dashboard_rules(app, "GET")} - NOT_PAGES
    assert routes == set(PAGES), (routes ^ set(PAGES))
    assert set(PHONE_PAGES) <= routes and TAKEN_BY_THE_WALK <= set(PAGES.values())


def test_every_dashboard_screenshot_exists_and_is_shown_in_the_docs():
    shown = (DOCS / "dashboard.md").read_text()
    names = {*PAGES.values(), *PHONE_PAGES.values(), *STATES}
    names |= {path.stem for path in (DOCS / "screenshots").glob("dashboard-*.png")}
    for name in sorted(names):
        assert (DOCS / "screenshots" / f"{name}.png").exists(), name
        assert f"(screenshots/{name}.png)" in shown, name
