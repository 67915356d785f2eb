"""How long a new user's loop takes: the dry run, `make smoke` and `make test`, in a fresh clone.

    .venv/bin/python benchmarks/loop_times.py              # all three (about 30 minutes on 2 cores)
    .venv/bin/python benchmarks/loop_times.py --only dry   # dry run, smoke or test

It clones the committed HEAD into a temporary folder (so nothing of this checkout's results,
venv or caches helps), runs each command there as the README gives it, and prints a Markdown
table of wall times; the install is timed as its own step first. For `make smoke` it also reads
Snakemake's benchmark files and reports the share of the benchmarked jobs' time (the torch jobs:
rules without torch write no benchmark) spent outside training. Timings drift with what else
the machine runs: close other work, and rerun before comparing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.job_seconds import benchmarked_seconds  # noqa: E402


def seconds(command: list[str], cwd: Path) -> str:
    start = time.monotonic()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return f"{time.monotonic() - start:.0f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("dry", "smoke", "test"), action="append")
    steps = parser.parse_args().only or ["dry", "smoke", "test"]
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        clone = Path(scratch) / "histres"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        rows.append(("install (make .venv/installed)", seconds(["make", ".venv/installed"], clone)))
        snakemake = [str(clone / ".venv/bin/snakemake")]
        if "dry" in steps:
            dry = [*snakemake, "-n", "-q", "--configfile", "config/smoke.yaml"]
            rows.append(("dry run of the small config", seconds(dry, clone)))
        if "smoke" in steps:
            rows.append(("make smoke, after the install", seconds(["make", "smoke"], clone)))
            spent = benchmarked_seconds(clone / "logs/smoke")
            share = 1 - spent["training"] / max(sum(spent.values()), 1e-9)
            rows.append(("make smoke: benchmarked jobs other than training", f"{share:.0%}"))
        if "test" in steps:
            rows.append(("make test, after the install", seconds(["make", "test"], clone)))
    print("| step | measured |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    sys.exit(main())
