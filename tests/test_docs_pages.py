"""The user docs hold together as pages: every relative link of README.md, ARCHITECTURE.md, benchmarks/README.md and
the pages under docs/ reaches a file, and its #anchor a heading of that page (GitHub's anchors); each guide in
docs/ stays short enough to read (what to run, what it does, how to read its output), its dated result runs in
docs/results/; and every results page is linked from a guide."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO
from docs_blocks import doc_files

GUIDE_LINES = 400  # "at most about 400 lines": a guide that grows past this moves its result runs to docs/results/
PAGES = [*doc_files(REPO), REPO / "ARCHITECTURE.md", REPO / "benchmarks" / "README.md"]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^ *(`{3,}|~{3,})")


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of the page's headings (fenced blocks left out): lower case, punctuation dropped, spaces
    to hyphens."""
    found, fence = set(), None
    for line in page.read_text(encoding="utf-8").splitlines():
        if match := FENCE.match(line):
            fence = match.group(1)[0] if fence is None else (None if match.group(1)[0] == fence else fence)
        elif fence is None and (heading := re.match(r"^#{1,6} (.*)$", line)):
            found.add(re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-"))
    return found


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading with that anchor")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(REPO).as_posix())
def test_every_relative_link_reaches_its_page_and_heading(page):
    assert not broken_links(page)


def test_the_link_check_finds_a_moved_section(tmp_path):
    (tmp_path / "guide.md").write_text("# Guide\n\n## Kept\n\n```\n## not a heading\n```\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("[a](guide.md#kept) [b](guide.md#moved) [c](gone.md) [d](#not-a-heading) [e](https://x.org)\n",
                    encoding="utf-8")
    assert broken_links(page) == ["guide.md#moved: no heading with that anchor", "gone.md: no such file",
                                  "#not-a-heading: no heading with that anchor"]


@pytest.mark.parametrize("guide", sorted((REPO / "docs").glob("*.md")), ids=lambda page: page.name)
def test_a_guide_stays_short(guide):
    lines = len(guide.read_text(encoding="utf-8").splitlines())
    assert lines <= GUIDE_LINES, f"{guide.name}: {lines} lines; move its dated result runs to docs/results/"


def test_every_results_page_is_linked_from_a_guide():
    guides = sorted((REPO / "docs").glob("*.md"))
    linked = {(guide.parent / target.partition("#")[0]).resolve() for guide in guides
              for target in LINK.findall(guide.read_text(encoding="utf-8")) if not re.match(r"^[a-z]+:", target)}
    results = sorted((REPO / "docs" / "results").glob("*.md"))
    assert results and not [page.name for page in results if page.resolve() not in linked]
