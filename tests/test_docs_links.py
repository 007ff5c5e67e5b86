"""Every relative link in README.md, CONTRIBUTING.md and docs/*.md points at a file of the repository, and every
`#anchor` at a heading of its target (GitHub's slugs: lower case, punctuation dropped, spaces as
hyphens). Moving text between documents must not leave a dead link behind, and no text cites a
document that is not in the repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def slug(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.MULTILINE)}


def relative_links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


def test_the_slug_follows_github() -> None:
    assert slug("Speed and accuracy") == "speed-and-accuracy"
    assert slug("How sizing works: the estimator and the planner") == "how-sizing-works-the-estimator-and-the-planner"
    assert slug("`POST /quotes`") == "post-quotes"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(document: Path) -> None:
    dead = []
    for target in relative_links(document):
        file_part, _, anchor = target.partition("#")
        resolved = (document.parent / file_part).resolve() if file_part else document
        if not resolved.is_file() or (anchor and resolved.suffix == ".md" and anchor not in anchors(resolved)):
            dead.append(target)
    assert dead == []


def test_nothing_cites_a_document_outside_the_repository() -> None:
    """The product brief and estimator notes the project started from are not in the repository: code,
    data and docs cite the primary sources (papers, specifications, measurements) instead."""
    outside = re.compile(r"\bBRIEF\b|ESTIMATOR-NOTES")
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    texts = [ROOT / f for f in tracked if Path(f).suffix in {".py", ".md", ".json", ".csv", ".html", ".toml"}]
    here = Path(__file__).resolve()
    found = [
        str(p.relative_to(ROOT))
        for p in texts
        if p.resolve() != here and p.is_file() and outside.search(p.read_text("utf-8"))
    ]
    assert found == []


def test_the_readme_links_every_document() -> None:
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in relative_links(ROOT / "README.md")}
    assert [p.name for p in DOCUMENTS[1:] if p.resolve() not in linked] == []
