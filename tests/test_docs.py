"""The documentation: every output column is documented, every relative link resolves, and no
file points at a protocol outside the repository."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest

from workflow.comparisons import COLUMNS

REPO = Path(__file__).resolve().parent.parent
OUTPUTS = REPO / "docs" / "outputs.md"
SMOKE = REPO / "reference" / "smoke"
# The CSVs of the small config's reference whose columns docs/outputs.md must name.
CSV_FOLDERS = ("summary", "tables", "comparisons", "audit")
CSV_FILES = ("checkpoints.csv", "runs.csv")
# Built from parts so that this file does not match itself.
FORBIDDEN = ("../" + "shared", "shared/" + "protocol")

FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+[\"'(][^)]*)?\)")
REFERENCE_LINK = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)", re.MULTILINE)
EXTERNAL = ("http://", "https://", "mailto:")


def reference_csvs() -> list[Path]:
    paths = [path for folder in CSV_FOLDERS for path in sorted((SMOKE / folder).rglob("*.csv"))]
    return paths + [SMOKE / name for name in CSV_FILES]


def read_header(path: Path) -> list[str]:
    with path.open(newline="") as handle:
        return next(csv.reader(handle))


def summary_metrics() -> dict[str, set[str]]:
    """Every value of the ``metric`` column, by summary file."""
    found = {}
    for path in sorted((SMOKE / "summary").glob("*.csv")):
        with path.open(newline="") as handle:
            rows = list(csv.DictReader(handle))
        if rows and "metric" in rows[0]:
            found[path.name] = {row["metric"] for row in rows}
    return found


def undocumented(names, text: str) -> list[str]:
    """The names that ``text`` never writes as inline code (`name`)."""
    return sorted({name for name in names if f"`{name}`" not in text})


@pytest.fixture(scope="module")
def outputs_text() -> str:
    assert OUTPUTS.is_file(), f"{OUTPUTS} is missing"
    return OUTPUTS.read_text()


def test_the_reference_has_the_csvs_the_checks_read():
    """An empty or moved reference would make the column checks pass vacuously."""
    for folder in CSV_FOLDERS:
        assert list((SMOKE / folder).rglob("*.csv")), f"no CSV under {SMOKE / folder}"
    for name in CSV_FILES:
        assert (SMOKE / name).is_file(), f"{SMOKE / name} is missing"
    assert "main.csv" in summary_metrics()


def test_every_reference_column_is_documented(outputs_text):
    missing = {}
    for path in reference_csvs():
        for name in undocumented(read_header(path), outputs_text):
            missing.setdefault(name, path.relative_to(REPO).as_posix())
    assert not missing, "columns not documented in docs/outputs.md (as `name`): " + ", ".join(
        f"{name} ({path})" for name, path in sorted(missing.items())
    )


def test_every_summary_metric_is_documented(outputs_text):
    missing = {
        name: summary
        for summary, metrics in summary_metrics().items()
        for name in undocumented(metrics, outputs_text)
    }
    assert not missing, "metrics not documented in docs/outputs.md (as `name`): " + ", ".join(
        f"{name} ({summary})" for name, summary in sorted(missing.items())
    )


def test_every_comparison_column_is_documented(outputs_text):
    missing = undocumented(COLUMNS, outputs_text)
    assert not missing, f"workflow.comparisons.COLUMNS not documented in docs/outputs.md: {missing}"


def test_the_column_check_catches_an_undocumented_name(outputs_text):
    assert undocumented(["h_repr", "no_such_column"], outputs_text) == ["no_such_column"]
    # A name inside a longer code span, or without backticks, does not count.
    assert undocumented(["h_repr"], "`h_repr_debiased` and h_repr") == ["h_repr"]


def markdown_files() -> list[Path]:
    files = [REPO / "README.md"]
    files += sorted((REPO / "docs").glob("**/*.md"))
    files += sorted((REPO / "reference").glob("**/*.md"))
    return [path for path in files if path.is_file()]


def relative_links(text: str) -> list[str]:
    """Targets of the inline and reference links outside code, minus external ones and pure
    anchors; a target's own anchor and query are dropped."""
    prose = CODE_SPAN.sub("", FENCE.sub("", text))
    targets = INLINE_LINK.findall(prose) + REFERENCE_LINK.findall(prose)
    out = []
    for target in targets:
        target = target.strip("<>")
        if not target or target.startswith(("#", *EXTERNAL)):
            continue
        path = unquote(re.split(r"[#?]", target, maxsplit=1)[0])
        if path:
            out.append(path)
    return out


def test_relative_links_are_extracted_outside_code_only():
    text = (
        "[a](docs/a.md#x) [b](https://x.org) [c](#anchor) ![d](<fig 1.png>) `[e](e.md)`\n"
        '[f](f.md "title")\n\n```text\n[g](g.md)\n```\n\n[h]: h%20i.md\n'
    )
    assert relative_links(text) == ["docs/a.md", "fig 1.png", "f.md", "h i.md"]


def test_every_relative_markdown_link_resolves():
    files = markdown_files()
    assert REPO / "README.md" in files
    broken = []
    for path in files:
        for target in relative_links(path.read_text()):
            base = REPO if target.startswith("/") else path.parent
            if not (base / target.lstrip("/")).exists():
                broken.append(f"{path.relative_to(REPO)}: {target}")
    assert not broken, "links to missing files or folders:\n" + "\n".join(broken)


def git_files() -> list[Path]:
    """Files git tracks, and new ones it would track (not ignored); skips without git."""
    if shutil.which("git") is None:
        pytest.skip("git is not available")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
    )
    if listed.returncode != 0:
        pytest.skip(f"not a usable git checkout: {listed.stderr.decode(errors='replace')}")
    names = sorted(set(filter(None, listed.stdout.decode().split("\0"))))
    return [REPO / name for name in names if (REPO / name).is_file()]


def test_no_file_refers_to_a_protocol_outside_the_repository():
    found = []
    for path in git_files():
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue  # binary
        text = data.decode("utf-8", errors="replace")
        for needle in FORBIDDEN:
            if needle in text:
                found.append(f"{path.relative_to(REPO)}: {needle}")
    assert not found, "files that refer outside the repository:\n" + "\n".join(found)
