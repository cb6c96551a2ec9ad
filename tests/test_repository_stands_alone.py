"""The repository stands on its own: nothing tracked points outside it, and every relative link and
anchor in the README and docs/ (and every docs/…md#anchor a comment cites) resolves."""
from pathlib import Path
import re
import subprocess

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Built from parts so that this file does not match itself.
OUTSIDE = [re.compile(re.escape(text)) for text in ("../" + "shared", "DECISIONS" + ".md", "DECISIONS" + " .",
                                                    "shared/" + "spec", "merchant-payment-api" + ".md")]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
DOC_REFERENCE = re.compile(r"(?<![\w/.])(docs/[\w/.-]+\.md)(?:#([\w-]+))?")
TEXT_SUFFIXES = {".py", ".md", ".html", ".js", ".css", ".txt", ".toml", ".yaml", ".yml", ".json", ".ini", ".cfg",
                 ".sh", ".ts", ".svg", ".example", ""}


def tracked_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    paths = [ROOT / name for name in listed.decode().split("\0") if name]
    return [path for path in paths if path.is_file() and path.suffix in TEXT_SUFFIXES
            and "node_modules" not in path.parts and path.name != "package-lock.json"]


def markdown_files() -> list[Path]:
    return [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))


def slug(heading: str) -> str:
    """The anchor GitHub (and most forges) give a heading."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", _prose(path.read_text(encoding="utf-8")), re.MULTILINE):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def _prose(text: str) -> str:
    """Markdown without its fenced code blocks (a `# comment` there is not a heading)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)


def test_nothing_tracked_links_to_or_cites_anything_outside_the_repository():
    found = []
    for path in tracked_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for pattern in OUTSIDE:
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(ROOT)}:{line}: {match.group(0)}")
    assert found == []


def test_every_relative_link_and_anchor_in_the_readme_and_docs_resolves():
    broken = []
    for page in markdown_files():
        for target in LINK.findall(_prose(page.read_text(encoding="utf-8"))):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):       # https:, mailto:: not ours to check
                continue
            file_part, _, anchor = target.partition("#")
            resolved = (page.parent / file_part).resolve() if file_part else page
            if not resolved.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_every_docs_page_and_anchor_a_tracked_file_cites_exists():
    broken = []
    for path in tracked_files():
        for page, anchor in DOC_REFERENCE.findall(path.read_text(encoding="utf-8", errors="replace")):
            target = ROOT / page
            if not target.exists():
                broken.append(f"{path.relative_to(ROOT)}: {page}")
            elif anchor and anchor not in anchors(target):
                broken.append(f"{path.relative_to(ROOT)}: {page}#{anchor}")
    assert broken == []


@pytest.mark.parametrize("heading, expected", [
    ("Money, strings and sizes", "money-strings-and-sizes"),
    ("Metrics: `GET /metrics`", "metrics-get-metrics"),
    ("Scaling `web`, `worker` and `webhooks`", "scaling-web-worker-and-webhooks"),
])
def test_anchors_are_the_ones_forges_make(heading, expected):
    assert slug(heading) == expected


def test_the_checks_find_what_they_look_for(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## Two words\n\n```\n# not a heading\n```\n")
    assert anchors(page) == {"title", "two-words"}
    assert OUTSIDE[0].search("see ../" + "shared" + "/x.md") and OUTSIDE[2].search("DECISIONS" + " .4")
