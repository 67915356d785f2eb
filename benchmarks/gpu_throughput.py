"""Training throughput of the engine on a CUDA GPU, one job alone and several side by side.

    python benchmarks/gpu_throughput.py [--updates 1500] [--jobs 1 4 8 12]

The workflow runs one training process per job; on a GPU these share the card. Prints, for each
number of jobs side by side, the ms per update of each job and the aggregate updates/s, which
is what sets the wall time of a study (its total updates / aggregate rate). PyTorch's ops are
used (training.kernels: torch): the fused kernels are CPU-only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.train_throughput import engine_side_by_side  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=1500, help="C updates per job")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 4, 8, 12])
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit(f"{args.device} requested but torch {torch.__version__} sees no CUDA device")
    name = torch.cuda.get_device_name(0) if args.device.startswith("cuda") else "cpu"
    print(f"device: {name}, torch {torch.__version__}, {args.updates} updates per job")
    for jobs in args.jobs:
        per_job = engine_side_by_side(jobs, args.updates, args.device, "torch")
        rate = sum(1000 / ms for ms in per_job)
        timings = ", ".join(f"{ms:.2f}" for ms in per_job)
        print(f"{jobs} job(s): {timings} ms/update; aggregate {rate:.0f} updates/s")


if __name__ == "__main__":
    main()
