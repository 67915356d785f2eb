"""Earlier code versions whose pair results the current code makes again byte for byte.

A pair result (comparison, probe table, search trace) records the code version of its rule's
library code (``workflow.provenance.code_version``), and a reference folder's result joins a
tree only when that version is the current one (``workflow.reference.pair_results``). Any edit of a
module the rule imports changes the version, even one that changes no result (a write mode,
a docstring); without this list such an edit would orphan every result of the reference,
and a new machine would train every run again.

``reproduced.json`` beside this file lists, per adapter, the earlier versions the current
code reproduces. A version is added only after the evidence named with it held under the new
code: the small config's end-to-end test
(``tests/test_workflow.py::test_the_small_config_gives_reference_smoke_bit_for_bit``), which
rebuilds every comparison, probe table and trace of ``reference/smoke`` and compares bytes.
``python -m workflow.lineage`` adds the versions the reference folders hold and the current
code does not make, after that test has passed; a JSON file is no library code, so listing a
version changes no code version.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from pathlib import Path

from workflow.provenance import REPO_ROOT, code_version

LINEAGE = Path(__file__).with_name("reproduced.json")
EVIDENCE = "tests/test_workflow.py::test_the_small_config_gives_reference_smoke_bit_for_bit"


def current(adapter: str) -> str:
    return code_version(REPO_ROOT / "workflow" / "scripts" / f"{adapter}.py")


def listed(path: Path = LINEAGE) -> dict[str, dict[str, str]]:
    """Adapter -> {earlier code version: the evidence that the current code reproduces it}."""
    return json.loads(path.read_text()) if path.is_file() else {}


def accepted(adapter: str, path: Path = LINEAGE) -> set[str]:
    """The code versions of ``adapter`` whose results the current code makes again."""
    return {current(adapter), *listed(path).get(adapter, {})}


def record(found: Iterable[tuple[str, str]], evidence: str, path: Path = LINEAGE) -> list:
    """Lists each (adapter, version) of ``found`` that is neither current nor listed; returns
    those added."""
    lineage = listed(path)
    added = []
    for adapter, version in sorted(set(found)):
        if version not in accepted(adapter, path):
            lineage.setdefault(adapter, {})[version] = evidence
            added.append((adapter, version))
    path.write_text(json.dumps(lineage, indent=2, sort_keys=True) + "\n")
    return added


def main(argv: list[str] | None = None) -> None:
    from workflow.reference import pair_results  # noqa: PLC0415 (pair_results reads this module)

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path, help="reference folders")
    parser.add_argument("--evidence", default=EVIDENCE, help="what showed the bytes equal")
    args = parser.parse_args(argv)
    folders = args.folders or sorted(p for p in (REPO_ROOT / "reference").iterdir() if p.is_dir())
    found = pair_results.code_versions(folders)
    for adapter, version in record(found, args.evidence):
        print(f"{adapter}: {version} is reproduced by {current(adapter)}")


if __name__ == "__main__":
    main()
