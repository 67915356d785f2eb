"""Which jobs a change reruns: one dry run per change against a finished results tree.

    .venv/bin/python benchmarks/rerun_scope.py --configfile config/smoke.yaml
    .venv/bin/python benchmarks/rerun_scope.py --skeleton          (the full config, untrained)

Run it in a checkout whose results are complete for that config (the first dry run must say
"Nothing to be done"), or with --skeleton: then it copies the checkout's tracked files to a
temporary folder and fakes a finished tree there (every output an empty file, Snakemake's --touch
recording each job as done, the stability search taking its first candidate), so that a config no
one has finished, such as the full one, can be measured. For each change (a config value per
section, a new bootstrap seed, a comment in every library module, a code edit to one module) it
writes the changed config, or edits the module, dry-runs the workflow without touching results,
puts everything back, and prints the jobs Snakemake would run, rule by rule. Prints a Markdown
table.
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from workflow.config import load_config  # noqa: E402
from workflow.status import job_counts  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
Config = dict

# (what changes, how): one representative key per config section.
CONFIG_CHANGES: list[tuple[str, Callable[[Config], None]]] = [
    ("statistics.bootstrap_seed + 1", lambda c: c["statistics"].update(bootstrap_seed=12346)),
    ("statistics.ci_level 0.9", lambda c: c["statistics"].update(ci_level=0.9)),
    (
        "matching.max_accuracy_gap_pp x 2",
        lambda c: c["matching"].update(
            max_accuracy_gap_pp=2 * c["matching"]["max_accuracy_gap_pp"]
        ),
    ),
    (
        "evaluation.batch_size / 2",
        lambda c: c["evaluation"].update(batch_size=c["evaluation"]["batch_size"] // 2),
    ),
    ("training.momentum 0.8", lambda c: c["training"].update(momentum=0.8)),
    (
        "training.state_every / 2",
        lambda c: c["training"].update(state_every=max(1, c["training"]["state_every"] // 2)),
    ),
    (
        "training.extended_checkpoints + one",
        lambda c: c["training"].update(
            extended_checkpoints=[
                *c["training"]["extended_checkpoints"],
                c["training"]["extended_checkpoints"][-1] + 50,
            ]
        ),
    ),
    ("data.normalize.mean 0.13", lambda c: c["data"]["normalize"].update(mean=0.13)),
    (
        "tasks.common_per_digit - 1",
        lambda c: c["tasks"].update(common_per_digit=c["tasks"]["common_per_digit"] - 1),
    ),
    ("model.hidden 64", lambda c: c["model"].update(hidden=64)),
    (
        "studies.probes.epochs + 1",
        lambda c: c["studies"]["probes"].update(epochs=c["studies"]["probes"]["epochs"] + 1),
    ),
    (
        "studies.probes.tost_margin_pp 0.75",
        lambda c: c["studies"]["probes"].update(tost_margin_pp=0.75),
    ),
    ("audit.seeds + 202", lambda c: c["audit"].update(seeds=[*c["audit"]["seeds"], 202])),
]


def snakemake(root: Path, configfile: Path | str, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "snakemake", "--nolock", *args, "--configfile", str(configfile)],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode:
        raise RuntimeError(f"snakemake {args} failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    return out.stdout + out.stderr


def planned_jobs(root: Path, configfile: Path | str) -> dict[str, int]:
    return job_counts(snakemake(root, configfile, "-n"))


def fake_output(path: Path, config: Config) -> None:
    """An empty file, except where the DAG reads an output to decide what comes next: the
    stability search, which here stops at its first (highest) candidate."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.parent.name == "lr_search" and path.suffix == ".json":
        path.write_text(json.dumps({"all_finite": True}))
    elif path.name == "selected_lr.json":
        lr = config["studies"]["activation"]["lr"]
        first = max(config["studies"]["activation"]["candidates"])
        path.write_text(json.dumps({"lr": first if lr is None else lr}))
    else:
        path.touch()


def build_skeleton(root: Path, configfile: Path, config: Config) -> None:
    """Fake a finished tree in ``root``: create every missing output, then let ``--touch
    --forceall`` set their times in DAG order and record every job's metadata (params, code,
    inputs); again while a decided checkpoint (the stability search) reveals more of the DAG."""
    for _ in range(10):
        rows = snakemake(root, configfile, "--summary", "--cores", "1").splitlines()
        missing = [row.split("\t")[0] for row in rows[1:] if "\tmissing\t" in row]
        if not missing:
            return
        for name in missing:
            fake_output(root / name, config)
        snakemake(root, configfile, "--touch", "--forceall", "--cores", "1", "--quiet")
    raise RuntimeError("the skeleton still misses outputs after 10 rounds")


def copy_checkout(destination: Path) -> Path:
    """The checkout's tracked files (no results, logs or Snakemake state)."""
    files = (
        subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, files):
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target)
    return destination


# Stages of the DAG, in order, by rule name prefix (the aggregate rule `all` is left out).
STAGES = (
    ("training", ("train_history", "extend_history", "trace_stability", "check_stability")),
    ("dumps", ("dump_",)),
    ("comparisons", ("compare_",)),
    ("matching", ("select_matches",)),
    ("lr selection", ("select_learning_rate",)),
    ("probes", ("train_probes",)),
    ("summaries", ("summarize_",)),
    ("figures", ("plot_",)),
    ("determinism audit", ("audit_",)),
)


def describe(jobs: dict[str, int]) -> str:
    """Jobs per stage, e.g. "training 16, dumps 20, ..."; "nothing" when none."""
    counts = {
        stage: sum(n for rule, n in jobs.items() if rule.startswith(prefixes))
        for stage, prefixes in STAGES
    }
    known = {p for _, prefixes in STAGES for p in prefixes}
    other = sorted(r for r in jobs if r != "all" and not r.startswith(tuple(known)))
    parts = [f"{stage} {n}" for stage, n in counts.items() if n] + other
    return ", ".join(parts) or "nothing"


def with_module_edit(
    root: Path, paths: list[Path], edit: Callable[[str], str], configfile: Path
) -> dict:
    originals = {path: path.read_text() for path in paths}
    try:
        for path, text in originals.items():
            path.write_text(edit(text))
        return planned_jobs(root, configfile)
    finally:
        for path, text in originals.items():
            path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configfile", action="append", default=[])
    parser.add_argument("--skeleton", action="store_true", help="measure on a faked tree")
    args = parser.parse_args()
    config = load_config([REPO / "config.yaml", *(REPO / name for name in args.configfile)])
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base.yaml"
        base.write_text(yaml.safe_dump(config))
        root = REPO
        if args.skeleton:
            root = copy_checkout(Path(tmp) / "checkout")
            build_skeleton(root, base, config)
        if planned_jobs(root, base):
            sys.exit("the results tree is not complete for this config: build it first")
        rows = measure(root, config, Path(tmp))
    print("| change | jobs a dry run schedules |\n|---|---|")
    for what, jobs in rows:
        print(f"| {what} | {jobs} |")


def measure(root: Path, config: Config, tmp: Path) -> list[tuple[str, str]]:
    """One dry run per change, everything put back after each."""
    rows: list[tuple[str, str]] = []
    base = tmp / "base.yaml"
    for what, change in CONFIG_CHANGES:
        changed = copy.deepcopy(config)
        change(changed)
        path = tmp / "changed.yaml"
        path.write_text(yaml.safe_dump(changed))
        rows.append((what, describe(planned_jobs(root, path))))
        print(f"{what}: {rows[-1][1]}", file=sys.stderr)
    # Library modules; adapters (workflow/scripts) rerun their rule on any edit (Snakemake).
    modules = sorted(p for p in (root / "workflow").glob("**/*.py") if "scripts" not in p.parts)
    jobs = with_module_edit(root, modules, lambda text: text + "\n# a comment\n", base)
    rows.append((f"a comment in each of the {len(modules)} library modules", describe(jobs)))
    for name in ("cka.py", "stats.py", "figures/plotting.py"):
        jobs = with_module_edit(
            root, [root / "workflow" / name], lambda text: text + "\nEDITED = True\n", base
        )
        rows.append((f"a code edit to workflow/{name}", describe(jobs)))
        print(f"{name}: {rows[-1][1]}", file=sys.stderr)
    return rows


if __name__ == "__main__":
    main()
