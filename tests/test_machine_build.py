"""workflow.machine.cbuild: a cached C library is used only while it matches its build record
and is this user's alone; it is built once, by the first job that needs it, even when two
jobs need it at the same time."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from workflow.machine import cbuild
from workflow.machine.cbuild import BuildError, build, record_path

FLAGS = ("-O2", "-shared")

# A stand-in compiler: logs each compilation, takes FAKE_CC_SECONDS, writes a fixed library.
FAKE_CC = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "fake-cc 1.0"; exit 0; fi
while [ $# -gt 0 ]; do [ "$1" = "-o" ] && out="$2"; shift; done
echo compiled >> "{log}"
sleep "${{FAKE_CC_SECONDS:-0}}"
printf 'library built by fake-cc' > "$out"
"""


@pytest.fixture
def fake_cc(tmp_path: Path):
    log = tmp_path / "cc.log"
    path = tmp_path / "fake-cc"
    path.write_text(FAKE_CC.format(log=log))
    path.chmod(0o755)

    def compilations() -> int:
        return len(log.read_text().splitlines()) if log.exists() else 0

    return (lambda: str(path)), compilations


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "lib.c"
    path.write_text("int answer(void) { return 42; }\n")
    return path


def _no_compiler() -> str:
    raise BuildError("no compiler here")


def test_a_library_is_compiled_once_and_recorded(tmp_path, fake_cc, source) -> None:
    cc, compilations = fake_cc
    target = tmp_path / "cache" / "lib-key.so"
    assert build(cc, source, target, [FLAGS]) == target
    assert build(cc, source, target, [FLAGS]) == target
    assert compilations() == 1
    record = json.loads(record_path(target).read_text())
    assert record["flags"] == list(FLAGS) and record["compiler_version"] == "fake-cc 1.0"
    # Mode 0755 whatever the umask: never writable by the group, which the check refuses.
    assert stat.S_IMODE(target.stat().st_mode) == 0o755


def test_a_built_library_needs_no_compiler(tmp_path, fake_cc, source) -> None:
    cc, _ = fake_cc
    target = build(cc, source, tmp_path / "lib-key.so", [FLAGS])
    assert build(_no_compiler, source, target, [FLAGS]) == target


def _garbage(target: Path) -> None:
    target.write_bytes(b"garbage")


def _writable_by_the_group(target: Path) -> None:
    target.chmod(0o775)


def _record_of_other_flags(target: Path) -> None:
    record = json.loads(record_path(target).read_text())
    record_path(target).write_text(json.dumps({**record, "flags": ["-O0"]}))


def _no_record(target: Path) -> None:
    record_path(target).unlink()


@pytest.mark.parametrize(
    ("spoil", "reason"),
    [
        (_garbage, "differs from the library its build record names"),
        (_writable_by_the_group, "writable by others"),
        (_record_of_other_flags, "built with other flags"),
        (_no_record, "is missing lib-key.so.json"),
    ],
)
def test_a_library_that_fails_its_check_is_built_anew(
    tmp_path, fake_cc, source, capfd, spoil, reason
) -> None:
    cc, compilations = fake_cc
    target = build(cc, source, tmp_path / "lib-key.so", [FLAGS])
    spoil(target)
    assert build(cc, source, target, [FLAGS]) == target
    assert compilations() == 2
    assert reason in capfd.readouterr().err
    assert cbuild.stale(source, target, [FLAGS]) is None


def test_a_library_of_another_source_is_built_anew(tmp_path, fake_cc, source) -> None:
    cc, compilations = fake_cc
    target = build(cc, source, tmp_path / "lib-key.so", [FLAGS])
    source.write_text("int answer(void) { return 43; }\n")
    assert "built from another lib.c" in cbuild.stale(source, target, [FLAGS])
    build(cc, source, target, [FLAGS])
    assert compilations() == 2


def test_a_library_of_another_user_is_never_used(tmp_path, fake_cc, source, monkeypatch) -> None:
    cc, _ = fake_cc
    target = build(cc, source, tmp_path / "lib-key.so", [FLAGS])
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(target).st_uid + 1)
    assert "not this user" in cbuild.stale(source, target, [FLAGS])


def test_a_stale_library_without_a_compiler_says_why(tmp_path, fake_cc, source) -> None:
    cc, _ = fake_cc
    target = build(cc, source, tmp_path / "lib-key.so", [FLAGS])
    _garbage(target)
    with pytest.raises(BuildError, match="no compiler here.*differs from the library"):
        build(_no_compiler, source, target, [FLAGS])


def test_jobs_that_need_a_library_at_once_compile_it_once(
    tmp_path, fake_cc, source, monkeypatch
) -> None:
    """The second job waits for the first one's build, then uses it."""
    cc, compilations = fake_cc
    monkeypatch.setenv("FAKE_CC_SECONDS", "1")
    target = tmp_path / "lib-key.so"
    built: list[Path] = []
    jobs = [
        threading.Thread(target=lambda: built.append(build(cc, source, target, [FLAGS])))
        for _ in range(2)
    ]
    for job in jobs:
        job.start()
    for job in jobs:
        job.join()
    assert built == [target, target]
    assert compilations() == 1
    assert cbuild.stale(source, target, [FLAGS]) is None
