"""Write envs/requirements.lock: every package that `pip install -r envs/requirements-dev.txt`
installs, pinned to its version and to the SHA-256 of the file pip installs.

    python envs/lock.py        # after an edit of requirements.txt or requirements-dev.txt

requirements-dev.txt names the lock as a constraints file (`-c requirements.lock`), and a hash in
a constraints file turns on pip's hash-checking mode for the whole install: every package,
dependencies included, must then be pinned and match its hash, or nothing is installed. The
lock comes from pip's own resolution (`pip install --dry-run --ignore-installed --report`),
whose hashes are those the package indexes publish; it holds the files of the platform that
wrote it (Linux x86_64, CPython 3.11, like every machine histres runs on): run this script on
another platform to install there. tests/test_envs.py checks that the lock covers every pin.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ENVS = Path(__file__).resolve().parent
LOCK = ENVS / "requirements.lock"
HEADER = """\
# Every package `pip install -r envs/requirements-dev.txt` installs, with the SHA-256 of its file
# (Linux x86_64, CPython 3.11). Written by envs/lock.py: edit requirements.txt or
# requirements-dev.txt, then rerun it. A hash here makes pip check every file it installs.
"""


def unlocked(dev: str) -> str:
    """requirements-dev.txt without its constraints line: what the lock is resolved from."""
    return "".join(line for line in dev.splitlines(keepends=True) if not line.startswith("-c "))


def resolve(python: str = sys.executable) -> list[dict]:
    with tempfile.TemporaryDirectory() as scratch:
        requirements = ENVS / ".lock-requirements.txt"
        requirements.write_text(unlocked((ENVS / "requirements-dev.txt").read_text()))
        report = Path(scratch) / "report.json"
        try:
            subprocess.run(
                [python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
                + ["--report", str(report), "-r", str(requirements)],
                check=True,
            )
        finally:
            requirements.unlink()
        return json.loads(report.read_text())["install"]


def render(installs: list[dict]) -> str:
    lines = []
    for item in sorted(installs, key=lambda i: i["metadata"]["name"].lower()):
        meta, digest = item["metadata"], item["download_info"]["archive_info"]["hashes"]["sha256"]
        lines.append(f"{meta['name']}=={meta['version']} --hash=sha256:{digest}\n")
    return HEADER + "".join(lines)


if __name__ == "__main__":
    LOCK.write_text(render(resolve()))
