"""Architecture rules the code must keep: what may import what."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "workflow"
LIBRARY = sorted(p for p in PACKAGE.glob("*.py") if p.name != "__init__.py")


def imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("module", LIBRARY, ids=lambda p: p.name)
def test_library_modules_never_import_snakemake(module):
    assert "snakemake" not in imported_roots(module)


@pytest.mark.parametrize("adapter", ["compare_pair", "select_matches", "summarize_study"])
def test_stages_after_the_dumps_run_without_torch(adapter):
    """Import everything the adapter imports, then check torch never got loaded."""
    path = PACKAGE / "scripts" / f"{adapter}.py"
    modules = sorted(
        node.module
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("workflow")
    )
    assert modules, f"{adapter} imports no workflow module"
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules)
    code += "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if 'torch' in m)\n"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=PACKAGE.parent)
