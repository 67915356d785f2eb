"""What made an artifact: code version of the library it ran, package versions, config slice.

Snakemake reruns a job when its ``script:`` file changes but not when a module that script
imports changes, so rules put ``code_version(script)`` into their params: a hash of the script
and of every ``workflow.*`` module it imports, transitively (with a module's C source). A Python
file is hashed by its syntax tree without docstrings, so comments, docstrings and formatting
rerun nothing; the tree's text depends on the Python version, which therefore counts as code.
"""

from __future__ import annotations

import ast
import hashlib
import json
import platform
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

PACKAGE_ROOT = Path(__file__).parent
REPO_ROOT = PACKAGE_ROOT.parent
PACKAGES = ("torch", "numpy", "scipy", "pandas", "pyarrow")


def _workflow_imports(source: Path) -> set[Path]:
    """Files of the ``workflow`` package that ``source`` imports directly."""
    found: set[Path] = set()
    for name in _imported_names(source.read_text(), str(source)):
        candidate = REPO_ROOT.resolve().joinpath(*name.split("."))
        for path in (candidate.with_suffix(".py"), candidate / "__init__.py"):
            if path.is_file():
                found.add(path)
    return found


@cache
def _imported_names(source: str, filename: str) -> tuple[str, ...]:
    """The ``workflow`` modules and names a Python source imports (cached by its text, like
    ``_syntax``)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return tuple(name for name in names if name.split(".")[0] == "workflow")


@cache
def library_files(script: str | Path) -> tuple[Path, ...]:
    """The script plus every ``workflow`` module it reaches through imports, sorted."""
    pending = [Path(script).resolve()]
    seen: set[Path] = set()
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        pending.extend(_workflow_imports(path) - seen)
    # A module's C source (kernels.py compiles kernels.c) is part of the code it runs.
    sources = {path.with_suffix(".c") for path in seen if path.with_suffix(".c").is_file()}
    return tuple(sorted(seen | sources))


_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def behaviour(path: Path) -> bytes:
    """The part of a file that can change what it does: a Python file's syntax tree without
    docstrings or positions (comments never reach it); any other file's bytes."""
    if path.suffix != ".py":
        return path.read_bytes()
    return _syntax(path.read_text(), str(path))


@cache
def _syntax(source: str, filename: str) -> bytes:
    # Cached by the text itself: parsing the workflow hashes each module once for all the
    # rules that import it, and an edited file is parsed again.
    tree = ast.parse(source, filename=filename)
    for node in ast.walk(tree):
        if not isinstance(node, _DOCUMENTED) or not node.body:
            continue
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            if isinstance(first.value.value, str):
                node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False).encode()


def _code_digest(files: Iterable[Path]) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(REPO_ROOT.resolve()).as_posix().encode())
        digest.update(b"\0")
        digest.update(behaviour(path))
    return digest.hexdigest()[:16]


def code_version(script: str | Path) -> str:
    """Short hash of the library code a script runs."""
    return _code_digest(library_files(script))


def workflow_version() -> str:
    """Short hash of the whole ``workflow`` package (every module, adapter and C source), in
    the form of ``code_version``: the code version a report names."""
    root = PACKAGE_ROOT.resolve()
    return _code_digest(sorted(p for p in root.rglob("*") if p.suffix in (".py", ".c")))


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def record(config_slice: Mapping[str, Any], code: str, **identity: Any) -> dict[str, Any]:
    """The provenance block stored with every artifact."""
    return {
        "config": config_slice,
        "code_version": code,
        "packages": package_versions(),
        **identity,
    }
