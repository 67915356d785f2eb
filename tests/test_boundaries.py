"""Architecture rules the code must keep: what may import what."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "workflow"
# Every library module, subpackages included; the adapters (scripts/) are Snakemake's side.
LIBRARY = sorted(
    path
    for path in PACKAGE.rglob("*.py")
    if path.name != "__init__.py" and path.relative_to(PACKAGE).parts[0] != "scripts"
)
# A function or module past these does more than one job (docs/architecture.md).
MAX_FUNCTION_LINES, MAX_MODULE_LINES = 60, 400


def imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def workflow_modules(path: Path) -> set[str]:
    """Workflow modules a script imports; ``from workflow import figures`` counts as
    ``workflow.figures`` (importing the bare package would load nothing)."""
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "workflow":
                modules |= {f"workflow.{alias.name}" for alias in node.names}
            elif node.module.startswith("workflow."):
                modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules |= {a.name for a in node.names if a.name.startswith("workflow.")}
    return modules


def test_workflow_modules_resolves_package_imports():
    assert "workflow.figures" in workflow_modules(PACKAGE / "scripts" / "plot_figure.py")


def library_id(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


@pytest.mark.parametrize("module", LIBRARY, ids=library_id)
def test_library_modules_never_import_snakemake(module):
    assert "snakemake" not in imported_roots(module)


def test_the_library_includes_its_subpackages():
    assert {"reference/export.py", "machine/caps.py"} <= {library_id(p) for p in LIBRARY}


@pytest.mark.parametrize("module", LIBRARY, ids=library_id)
def test_library_functions_and_modules_stay_short(module):
    source = module.read_text()
    assert source.count("\n") <= MAX_MODULE_LINES, f"{library_id(module)} is over 400 lines"
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, f"{library_id(module)}: {long}"


TORCH_FREE_ADAPTERS = [
    "compare_runs",
    "select_matches",
    "summarize_pairs",
    "summarize_pilot",
    "summarize_long",
    "summarize_noise_floor",
    "tabulate_trajectory",
    "summarize_activation",
    "summarize_probes",
    "select_learning_rate",
    "check_stability",
    "plot_figure",
    "audit_determinism",
    "verify_reference",
    "summarize_sensitivity",
    "describe_config",
]
TORCH_ADAPTERS = [
    "audit_run",
    "check_device",
    "prepare_mnist",
    "train_history",
    "dump_representations",
    "train_probes",
    "trace_stability",
    "verify_run",
]


def test_every_adapter_is_classified():
    """A new adapter must be listed as torch-free (and so tested below) or as needing torch."""
    adapters = {p.stem for p in (PACKAGE / "scripts").glob("*.py")}
    assert adapters == set(TORCH_FREE_ADAPTERS) | set(TORCH_ADAPTERS)


@pytest.mark.parametrize(
    "module",
    [
        *("studies", "summary", "compare", "matching", "stats", "config", "identity"),
        *("groups", "registry", "reference.export", "reference.verify", "reference.__main__"),
    ],
)
def test_torch_free_library_modules(module):
    code = f"import sys\nimport workflow.{module}\nassert 'torch' not in sys.modules\n"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=PACKAGE.parent)


@pytest.mark.parametrize("adapter", TORCH_FREE_ADAPTERS)
def test_stages_after_the_dumps_run_without_torch(adapter):
    """Import everything the adapter imports, then check torch never got loaded."""
    path = PACKAGE / "scripts" / f"{adapter}.py"
    modules = sorted(workflow_modules(path))
    assert modules, f"{adapter} imports no workflow module"
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules)
    code += "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if 'torch' in m)\n"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=PACKAGE.parent)


TRAINING_LOOP = {"train.py", "learner.py", "relaxation.py", "resume.py", "segment.py", "kernels.py"}


@pytest.mark.parametrize("adapter", ["dump_representations", "train_probes"])
def test_the_jobs_after_training_do_not_hash_the_training_loop(adapter: str) -> None:
    """A change to how runs train must not make their dumps and probes look stale: a
    reference's probe results are restored only under the code version that made them."""
    from workflow.provenance import library_files

    hashed = {path.name for path in library_files(PACKAGE / "scripts" / f"{adapter}.py")}
    assert not hashed & TRAINING_LOOP


TESTS = Path(__file__).resolve().parent


def test_test_modules_share_helpers_only_through_tests_support() -> None:
    """No test module imports another; what they share lives in tests/support/."""
    borrowed = {}
    for path in sorted(TESTS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests"):
                if not node.module.startswith("tests.support"):
                    borrowed[path.name] = node.module
    assert not borrowed, borrowed
