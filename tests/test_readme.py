"""The README's quick start stays true: two commands, and CI runs the test one verbatim."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def quick_start() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [line.strip() for line in block.strip().splitlines() if line.strip() and not line.startswith("#")]


def test_quick_start_is_two_commands():
    commands = quick_start()
    assert len(commands) == 2, commands
    assert "fusegate run" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command():
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert quick_start()[1] in ci_lines


# The README is the front door (what, two commands with their times, a tour, layout, links); reference material
# and measurements live in docs/, one file per topic.
MAX_README_LINES = 200
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= MAX_README_LINES, (
        f"README.md has {len(lines)} lines; move reference material to docs/"
    )


def _prose(text: str) -> str:
    """The text outside fenced code blocks and inline code, where a link is a link."""
    kept, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            kept.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(kept)


def _anchors(path: Path) -> set[str]:
    """GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens, repeats numbered."""
    seen: dict[str, int] = {}
    fenced = False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not re.match(r"#{1,6} ", line):
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line.lstrip("#").strip()).replace("`", "")
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        seen[slug] = seen.get(slug, -1) + 1
    return {slug if n == 0 else f"{slug}-{i}" for slug, n in seen.items() for i in range(n + 1)}


def _docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("doc", _docs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc: Path):
    broken = []
    for target in LINK.findall(_prose(doc.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        path = (doc.parent / file_part).resolve() if file_part else doc
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(f"{target}: no heading with that anchor in {path.name}")
    assert broken == [], f"{doc.relative_to(ROOT)}: " + "; ".join(broken)


def test_docs_have_no_orphans():
    """Every topic file is reachable from the README's links."""
    linked = {
        (ROOT / t.partition("#")[0]).resolve() for t in LINK.findall(_prose((ROOT / "README.md").read_text()))
    }
    orphans = [p.name for p in sorted((ROOT / "docs").glob("*.md")) if p.resolve() not in linked]
    assert orphans == []


# --- docs read as a product ------------------------------------------------------------------------------------

# Reference material that is long by nature: generated figures, the settings table, the task semantics.
REFERENCE = {"measurements.md", "settings.md", "tasks.md"}
MAX_PROSE_LINES = 1000
HEX = re.compile(r"(?<![\w/.-])[0-9a-f]{7,40}(?![\w-])")
ISSUE = re.compile(r"\b(?:issue|PR|pull request)s? #?\d+|(?<![\w&/])#\d+\b", re.IGNORECASE)
# A measured figure: a number with a unit of time, a ratio, a share or a count of runs.
FIGURE = re.compile(
    r"(?<![\w.,-])(\d[\d,]*(?:\.\d+)?)\s?(ms|µs|us|s|seconds?|min|minutes?|h|hours?|x|%|runs?|samples?|rounds?)(?![\w])"
)
# Figures a doc may state without a measurement behind them, each with why.
NOT_MEASURED = {
    ("fleet.md", "6 h"): "the default of FUSEGATE_BOT_WINDOW_S (21600 s), in settings.md",
}


def _topic_docs() -> list[Path]:
    return [p for p in sorted((ROOT / "docs").glob("*.md")) if p.name not in REFERENCE]


def test_docs_prose_is_short():
    """The docs a user reads end to end stay short; the exit-code table in cli.md is reference."""
    counts = {}
    for doc in [ROOT / "README.md", *_topic_docs()]:
        lines = doc.read_text().splitlines()
        if doc.name == "cli.md":
            table = doc.read_text().split("## Exit codes", 1)[1].split("\n## ", 1)[0]
            lines = lines[: len(lines) - sum(1 for ln in table.splitlines() if ln.startswith("|"))]
        counts[doc.name] = len(lines)
    assert sum(counts.values()) <= MAX_PROSE_LINES, counts


def _is_commit(token: str) -> bool:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--quiet", "--verify", f"{token}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


@pytest.mark.parametrize("doc", _docs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_quote_no_commit_or_issue(doc: Path):
    """History belongs in commit messages: no commit of this repository, no issue number."""
    if not (ROOT / ".git").exists():
        pytest.fail("the docs' history check needs the git checkout")
    text = doc.read_text()
    commits = [t for t in HEX.findall(text) if re.search(r"[a-f]", t) and _is_commit(t)]
    assert commits == [], f"{doc.name} quotes commits {commits}"
    assert ISSUE.findall(text) == [], f"{doc.name} quotes issue numbers"


@pytest.mark.parametrize("doc", [ROOT / "README.md", *_topic_docs()], ids=lambda p: p.name)
def test_every_figure_is_measured(doc: Path):
    """A figure in the docs comes from docs/measurements.md (generated from the measurements' outputs)."""
    measured = (ROOT / "docs" / "measurements.md").read_text()
    missing = []
    for m in FIGURE.finditer(_prose(doc.read_text())):
        figure = m.group(0)
        if (doc.name, figure) in NOT_MEASURED:
            continue
        if not re.search(rf"(?<![\d.]){re.escape(m.group(1))}\s?{re.escape(m.group(2))}", measured):
            missing.append(figure)
    assert missing == [], f"{doc.name} quotes figures that docs/measurements.md does not have: {missing}"


def test_the_figure_check_can_fail():
    found = FIGURE.findall("took 9 minutes, 1.5x slower, 40 runs, 3.2 ms")
    assert found == [("9", "minutes"), ("1.5", "x"), ("40", "runs"), ("3.2", "ms")]
    assert ISSUE.findall("see issue 22 and #31") and not ISSUE.findall("[a](x.md#the-api)")
