"""Memory of one training job across a long C interval, as the extended segment runs it.

    .venv/bin/python benchmarks/training_memory.py                 # 6,000 C updates, ~4 min
    .venv/bin/python benchmarks/training_memory.py --updates 25000 # a whole extended interval

Trains the full-config model on random images (tiny tasks A and B, then C with no checkpoint
before the last update, so one interval holds every loss) under the heap settings the workflow
gives every job, and prints the resident memory (RSS) as it goes, its growth per 1,000 C
updates, and the peak. Before learner.Losses (commit bde028b) the per-update loss tensors grew
it by about 0.3 GB per 1,000 updates, 15 GB over the extended segment's 25,000-update interval.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workflow.machine.heap import HEAP_ENVIRONMENT  # noqa: E402


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS"))
    return int(line.split()[1]) / 1024


def measure(updates: int) -> None:
    import torch

    from workflow.machine.determinism import configure_torch
    from workflow.model import ModelSpec, build_model
    from workflow.train import TrainingData, TrainSettings, train_history

    configure_torch(1)
    generator = torch.Generator().manual_seed(0)
    images = torch.randn(60000, 1, 28, 28, generator=generator)
    labels = torch.randint(0, 10, (60000,), generator=generator)
    tasks = {"A": torch.arange(256), "B": torch.arange(256, 512), "C": torch.arange(60000)}
    settings = TrainSettings(1, 128, 0.05, 0.9, 0.0, "reset", (updates,), 1, "cpu", "fused")
    samples: list[tuple[int, float]] = []

    def log(line: str) -> None:
        if line.startswith("common C "):
            at = int(line.split()[2].split("/")[0])
            samples.append((at, rss_mb()))
            print(f"C update {at:>6}: RSS {samples[-1][1]:,.0f} MB", flush=True)

    data = TrainingData(images, labels, tasks)
    train_history(build_model(0, ModelSpec()), data, "ABC", 0, settings, lambda *_: None, log)
    (first_at, first), (last_at, last) = samples[0], samples[-1]
    growth = (last - first) / max(last_at - first_at, 1) * 1000
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"growth {growth:,.1f} MB per 1,000 C updates; peak RSS {peak:,.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=6000)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        measure(args.updates)
        return
    # glibc reads its heap settings when the process starts: measure in one started with them.
    command = [sys.executable, __file__, "--child", "--updates", str(args.updates)]
    subprocess.run(command, env={**os.environ, **HEAP_ENVIRONMENT}, check=True)


if __name__ == "__main__":
    main()
