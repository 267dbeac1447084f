"""Every relative link in README.md and docs/ leads somewhere: the file (or folder) exists, and a `#anchor` into a
markdown file names one of its headings, slugged as GitHub slugs them. Links inside code blocks and code spans are
not links; links with a scheme (https:, mailto:) are not checked."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(?:<([^>\n]*)>|([^)\s]*))(?:\s+[\"'(].*?[\"')])?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+[\"'(].*[\"')])?\s*$")
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)\s*$")
HTML_ANCHOR = re.compile(r"<a\s[^>]*\b(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", re.I)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the text outside fenced code blocks, code spans replaced by their bare text."""
    lines, fence = [], None
    for number, line in enumerate(text.splitlines(), start=1):
        opening = FENCE.match(line)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence) \
                    and not line.strip()[len(opening.group(1)):].strip():
                fence = None
            continue
        if opening:
            fence = opening.group(1)
            continue
        lines.append((number, line))
    return lines


def without_code_spans(line: str, keep_text: bool) -> str:
    """A line with its code spans as their text (for headings) or as a neutral word (for finding links)."""
    return CODE_SPAN.sub(lambda m: m.group(2).strip() if keep_text else "code", line)


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every inline link, image and reference definition outside code."""
    found = []
    for number, line in prose_lines(text):
        plain = without_code_spans(line, keep_text=False)
        found += [(number, m.group(1) if m.group(1) is not None else m.group(2)) for m in INLINE_LINK.finditer(plain)]
        definition = REFERENCE_DEFINITION.match(plain)
        if definition:
            found.append((number, definition.group(1)))
    return found


def heading_text(raw: str) -> str:
    """A heading as GitHub renders its text: code spans, links, images, emphasis and HTML tags reduced to text."""
    text = without_code_spans(raw, keep_text=True)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"(\*{1,3})(.+?)\1", r"\2", text)
    text = re.sub(r"(?<!\w)(_{1,3})(.+?)\1(?!\w)", r"\2", text)
    return text.strip()


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text (github-slugger): lower case, every character that is not a letter, a
    mark, a digit, a connector (`_`), a space or a hyphen removed, then each space a hyphen."""
    kept = "".join(
        c for c in heading.lower()
        if c in " -" or unicodedata.category(c)[0] in "LMN" or unicodedata.category(c) == "Pc"
    )
    return kept.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a markdown page: one per heading (a repeated slug gets -1, -2, ...), plus HTML anchors."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    previous: tuple[int, str] | None = None
    headings = []
    for number, line in prose_lines(text):
        atx = ATX_HEADING.match(line)
        if atx:
            headings.append(atx.group(2) or "")
        elif SETEXT_UNDERLINE.match(line) and previous is not None and previous[0] == number - 1 \
                and previous[1].strip() and not ATX_HEADING.match(previous[1]) \
                and not (line.strip().startswith("-") and not previous[1].strip()):
            headings.append(previous[1].strip())
        found |= set(HTML_ANCHOR.findall(line))
        previous = (number, line)
    for heading in headings:
        base = slug(heading_text(heading))
        count = seen.get(base, 0)
        found.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return found


def broken_links(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    problems = []
    for number, target in links(text):
        if not target or SCHEME.match(target) or target.startswith("//"):
            continue
        path_part, _, anchor = target.partition("#")
        path_part = unquote(path_part.split("?", 1)[0])
        where = f"{page.relative_to(ROOT)}:{number}: ({target})"
        linked = (page.parent / path_part).resolve() if path_part else page
        if path_part.startswith("/"):
            linked = (ROOT / path_part.lstrip("/")).resolve()
        if not linked.exists():
            problems.append(f"{where} no such file: {linked.relative_to(ROOT) if linked.is_relative_to(ROOT) else linked}")
            continue
        if anchor and linked.is_file() and linked.suffix.lower() == ".md":
            if unquote(anchor).lower() not in anchors(linked.read_text(encoding="utf-8")):
                problems.append(f"{where} {linked.relative_to(ROOT)} has no heading with the anchor '#{anchor}'")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(page):
    assert broken_links(page) == []


def test_the_pages_checked_include_the_readme_and_the_reference():
    names = {str(p.relative_to(ROOT)) for p in PAGES}
    assert {"README.md", "docs/reference/statements.md", "docs/reference/connectors.md"} <= names


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("`upsert-kafka`", "upsert-kafka"),
        ("What Spark refuses, and why (`native_operators.py`, Spark 4.2.0)", "what-spark-refuses-and-why-native_operatorspy-spark-420"),
        ("Status on 2026-11-27, OVER, window Top-N", "status-on-2026-11-27-over-window-top-n"),
        ("`CREATE [TEMPORARY] TABLE [IF NOT EXISTS] t (...) WITH (...)`", "create-temporary-table-if-not-exists-t--with-"),
        ("Design 1b: sub-buckets in a MapState (prototype, `submap_state.py`)",
         "design-1b-sub-buckets-in-a-mapstate-prototype-submap_statepy"),
        ("Where we are, end to end (benchmarks/engine.py)", "where-we-are-end-to-end-benchmarksenginepy"),
        ("**Bold** and _emphasis_ and [a link](x.md)", "bold-and-emphasis-and-a-link"),
        ("Überblick: Größe", "überblick-größe"),
    ],
)
def test_headings_are_slugged_as_github_slugs_them(heading, expected):
    assert slug(heading_text(heading)) == expected


def test_repeated_headings_get_numbered_anchors_and_code_blocks_have_none():
    page = "# Jobs\n\n## Limits\n\n```sh\n# not a heading\n```\n\n## Limits\n\nSetext\n------\n"
    assert anchors(page) == {"jobs", "limits", "limits-1", "setext"}


def test_links_in_code_are_not_links_and_titles_are_not_targets():
    page = 'See [a](a.md "the a page") and `[b](b.md)`.\n\n```\n[c](c.md)\n```\n[d]: d.md\n![img](<e f.png>)\n'
    assert [target for _, target in links(page)] == ["a.md", "d.md", "e f.png"]
