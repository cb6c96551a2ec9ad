"""The README is the front door: short, the newcomer's path on its first screen, and a map that
names every guide in docs/ for its reader."""
from pathlib import Path
import re

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SCREEN = 24         # lines a terminal shows at once


def test_the_readme_stays_short():
    assert len(README.encode("utf-8")) <= 10 * 1024


def test_the_first_screen_says_what_tender_is_and_where_a_newcomer_goes_next():
    first_screen = "\n".join(README.splitlines()[:SCREEN])
    assert "merchant payment service" in first_screen
    assert "(docs/architecture.md)" in first_screen
    assert "make run " in first_screen and "make test " in first_screen


def test_the_map_links_every_guide_in_docs():
    linked = set(re.findall(r"\]\((docs/[\w/.-]+\.md)(?:#[\w-]+)?\)", README))
    guides = {str(path.relative_to(ROOT)) for path in (ROOT / "docs").rglob("*.md")}
    assert guides - linked == set()
    for reader in ("operator", "API user", "plugin user", "contributor"):
        assert reader in README
