"""Training throughput of the engine against the machine's fp32 roof and typical research code.

    .venv/bin/python benchmarks/train_throughput.py            # everything (about 9 minutes)
    .venv/bin/python benchmarks/train_throughput.py --no-dag   # skip the small-config DAG run

Prints, all measured in this one run on this machine:
  * the fp32 sgemm roof (GFLOP/s, all cores),
  * FLOPs of one training step (torch.utils.flop_counter),
  * the typical-research-code loop (DataLoader applying ToTensor+Normalize per sample, eager
    model, all cores) in ms/step,
  * the engine in the workflow's own job layout (one single-thread job per core, side by side)
    in ms/step per job and aggregate GFLOP/s,
  * the two ratios of issue 4 (aggregate / roof, engine steps/s / typical steps/s),
  * the share of the small config's DAG wall time not spent in training steps,
  * whether the engine's optimizations change results (bits or largest difference).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.job_seconds import benchmarked_seconds  # noqa: E402
from workflow.config import load_config  # noqa: E402
from workflow.images import normalize  # noqa: E402
from workflow.kernels import fused_forward  # noqa: E402
from workflow.machine.caps import isa_caps  # noqa: E402
from workflow.machine.determinism import configure_torch  # noqa: E402
from workflow.machine.heap import HEAP_ENVIRONMENT  # noqa: E402
from workflow.machine.mkl import mkl_preload  # noqa: E402
from workflow.model import HistoryNet, ModelSpec, build_model  # noqa: E402
from workflow.train import (  # noqa: E402
    TrainingData,
    TrainSettings,
    train_history,
)

BATCH = 128
MEAN, STD = 0.1307, 0.3081
CORES = os.cpu_count() or 1

# The instruction-set cap and MKL code every workflow job gets from the config (machine).
MACHINE = load_config([REPO / "config.yaml"])["machine"]
JOB_CAPS = {
    **isa_caps(MACHINE["cpu_isa"], os.environ),
    **mkl_preload(MACHINE["mkl_cpu"], os.environ),
}


def sgemm_gflops(threads: int, n: int = 2048, repeats: int = 8) -> float:
    torch.set_num_threads(threads)
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * n**3 / best / 1e9


def flops_per_step() -> float:
    from torch.utils.flop_counter import FlopCounterMode

    model = HistoryNet()
    x, y = torch.randn(BATCH, 1, 28, 28), torch.randint(0, 10, (BATCH,))
    with FlopCounterMode(display=False) as counter:
        F.cross_entropy(model(x), y).backward()
    return float(counter.get_total_flops())


class TypicalNet(nn.Module):
    """The protocol's CNN as research code writes it: activation, then pooling."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        return self.head(self.features(x))


def typical_ms_per_step(images: np.ndarray, labels: np.ndarray, steps: int) -> float:
    from PIL import Image
    from torch.utils.data import DataLoader, Dataset
    from torchvision import transforms

    class Digits(Dataset):
        transform = transforms.Compose(
            [transforms.ToTensor(), transforms.Normalize((MEAN,), (STD,))]
        )

        def __len__(self):
            return len(images)

        def __getitem__(self, i):
            return self.transform(Image.fromarray(images[i])), int(labels[i])

    torch.set_num_threads(CORES)
    model = TypicalNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loader = DataLoader(Digits(), batch_size=BATCH, shuffle=True)
    # Time from one step's end to the next: data loading is part of the loop.
    times, last = [], None
    for x, y in loader:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        now = time.perf_counter()
        if last is not None:
            times.append(now - last)
        last = now
        if len(times) >= steps + 3:
            break
    return 1000 * float(np.median(times[3:]))


def synthetic_data(n: int = 6000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 28, 28), dtype=np.uint8), rng.integers(0, 10, n)


def engine_job(updates: int, device: str = "cpu", kernels: str = "fused") -> float:
    """One workflow-style training job (single thread): ms per C update."""
    configure_torch(1)
    images, labels = synthetic_data()
    x = normalize(images, MEAN, STD)
    idx = torch.arange(len(images))
    data = TrainingData(x, torch.from_numpy(labels), {"A": idx[:10], "B": idx[10:20], "C": idx})
    settings = TrainSettings(1, BATCH, 0.05, 0.9, 0.0, "reset", (0, updates), 1, device, kernels)
    record, _ = train_history(
        build_model(1, ModelSpec()), data, "ABC", 1, settings, lambda *_: None, log=lambda _: None
    )
    return 1000 * record.phases[-1]["seconds"] / updates


def engine_side_by_side(
    jobs: int, updates: int, device: str = "cpu", kernels: str = "fused"
) -> list[float]:
    code = (
        f"import sys; sys.path.insert(0, {str(REPO)!r}); "
        "from benchmarks.train_throughput import engine_job; "
        f"print(engine_job({updates}, {device!r}, {kernels!r}))"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env={**os.environ, **HEAP_ENVIRONMENT, **JOB_CAPS},  # as the workflow starts its jobs
        )
        for _ in range(jobs)
    ]
    return [float(p.communicate()[0].strip().splitlines()[-1]) for p in procs]


def _train_steps(model, x, y, steps: int, memory, fused: bool = False) -> np.ndarray:
    forward = partial(fused_forward, model) if fused else model
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(0))
    for step in range(steps):
        batch = order[(step * BATCH) % len(x) :][:BATCH]
        opt.zero_grad()
        F.cross_entropy(forward(x[batch].contiguous(memory_format=memory)), y[batch]).backward()
        opt.step()
    return np.concatenate([p.detach().contiguous().numpy().ravel() for p in model.parameters()])


class PlainNet(HistoryNet):
    """The engine's model with the protocol's literal order: activation, then pooling."""

    def forward(self, x):
        return self.representations(x)["logits"]


def results_unchanged(steps: int = 40) -> dict:
    """What the engine's optimizations do to results, from the same weights and batches.

    Pooling before the activation is checked for bit-identity over ``steps`` training steps.
    channels_last and the fused kernels change summation orders, so bits cannot match; their
    difference from the plain implementation (contiguous layout, PyTorch's ops, activation
    then pooling) is measured after one step, where it is pure float rounding (later steps only
    amplify it chaotically, as any change of summation order would). tests/test_fast_path.py
    checks the fused kernels bit for bit where the arithmetic is exact.
    """
    configure_torch(1)
    images, labels = synthetic_data(1024, seed=1)
    x = normalize(images, MEAN, STD)
    y = torch.from_numpy(labels)
    cl = torch.channels_last

    def model(cls, memory=cl):
        torch.manual_seed(7)
        return cls(ModelSpec()).to(memory_format=memory)

    engine = _train_steps(model(HistoryNet), x, y, steps, cl)
    plain = _train_steps(model(PlainNet), x, y, steps, cl)
    one_plain = _train_steps(
        model(PlainNet, torch.contiguous_format), x, y, 1, torch.contiguous_format
    )
    scale = np.abs(one_plain).max()
    checks = {"steps": steps, "pool_first_bitwise": bool(np.array_equal(engine, plain))}
    for name, fused in (("layout", False), ("fused", True)):
        one = _train_steps(model(HistoryNet), x, y, 1, cl, fused=fused)
        checks[f"{name}_max_abs"] = float(np.abs(one - one_plain).max())
        checks[f"{name}_max_rel"] = checks[f"{name}_max_abs"] / float(scale)
    return checks


def dag_overhead(cores: int) -> dict:
    """Run the small config's DAG in a scratch copy; overhead = 1 - training-step time share."""
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        for name in ("Snakefile", "config.yaml", "config", "envs", "rules", "workflow"):
            src = REPO / name
            (shutil.copytree if src.is_dir() else shutil.copy2)(src, work / name)
        if (REPO / "resources/mnist.npz").exists():
            (work / "resources").mkdir()
            shutil.copy2(REPO / "resources/mnist.npz", work / "resources/mnist.npz")
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "snakemake", "--cores", str(cores)]
            + ["--configfile", "config/smoke.yaml"],
            cwd=work,
            check=True,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - start
        training = 0.0
        records = [
            *work.glob("results/smoke/runs/**/run.json"),
            *work.glob("results/smoke/runs/**/extension.json"),
        ]
        for path in records:
            training += sum(p["seconds"] for p in json.loads(path.read_text())["phases"])
        job_seconds = benchmarked_seconds(work / "logs/smoke")
    return {
        "wall_s": wall,
        "training_s": training,
        "cores": cores,
        "jobs": int(re.findall(r"(\d+) of \d+ steps", done.stderr)[-1]),
        "job_seconds": job_seconds,
        "overhead_share": 1 - training / (wall * cores),
    }


def print_bits_check() -> None:
    """The optimisations' effect on the bits: none, or float rounding only."""
    check = results_unchanged()
    print(
        f"pool before activation vs after, {check['steps']} training steps: bitwise equal "
        f"{check['pool_first_bitwise']}"
    )
    for name, what in (("layout", "channels_last"), ("fused", "channels_last + fused kernels")):
        print(
            f"{what} vs plain after 1 step: max abs diff {check[f'{name}_max_abs']:.2g} "
            f"({check[f'{name}_max_rel']:.2g} of the largest weight; float rounding)"
        )


def print_dag_overhead() -> None:
    dag = dag_overhead(CORES)
    print(
        f"small-config DAG: {dag['jobs']} jobs, wall {dag['wall_s']:.0f} s on {CORES} cores, "
        f"training steps {dag['training_s']:.0f} s; overhead share "
        f"{dag['overhead_share']:.0%}   (target <= 15%)"
    )
    spent = ", ".join(f"{kind} jobs {s:.0f} s" for kind, s in dag["job_seconds"].items())
    print(f"  job wall time: {spent}; the rest is untimed jobs, start-up and scheduling")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=120, help="updates per engine job")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved measurement rounds")
    parser.add_argument("--no-dag", action="store_true", help="skip the small-config DAG run")
    args = parser.parse_args()

    flops = flops_per_step()
    images, labels = synthetic_data()
    print(f"machine: {CORES} cores, torch {torch.__version__}")
    print(f"training step (batch {BATCH}): {flops / 1e9:.3f} GFLOP")
    # This machine's speed drifts from minute to minute, so each round measures the roof, the
    # typical loop and the engine back to back, and the ratios are each round's own; the
    # summary is their median over the rounds.
    rounds = []
    for round_ in range(args.rounds):
        roof = sgemm_gflops(CORES)
        typical = typical_ms_per_step(images, labels, steps=30)
        per_job = engine_side_by_side(CORES, args.updates)
        aggregate = sum(flops / ms / 1e6 for ms in per_job)
        steps = sum(1000 / ms for ms in per_job)
        rounds.append((roof, typical, aggregate, steps, aggregate / roof, steps * typical / 1000))
        timings = ", ".join(f"{ms:.1f}" for ms in per_job)
        print(
            f"round {round_ + 1}: sgemm {roof:.0f} GFLOP/s; typical {typical:.1f} ms/step; "
            f"engine jobs {timings} ms/step; aggregate/roof {rounds[-1][4]:.2f}, "
            f"engine/typical {rounds[-1][5]:.2f}"
        )
    roof, typical, aggregate, engine_steps, roof_ratio, typical_ratio = (
        float(np.median(column)) for column in zip(*rounds, strict=True)
    )
    print(f"median over {args.rounds} rounds:")
    print(f"fp32 sgemm roof ({CORES} threads): {roof:.1f} GFLOP/s")
    print(
        f"typical research code ({CORES} threads, DataLoader + ToTensor/Normalize): "
        f"{typical:.1f} ms/step = {flops / typical / 1e6:.1f} GFLOP/s"
    )
    print(
        f"engine, {CORES} single-thread jobs side by side: {engine_steps:.1f} steps/s, "
        f"aggregate {aggregate:.1f} GFLOP/s"
    )
    print(f"ratio aggregate / roof: {roof_ratio:.2f}   (target >= 0.55)")
    print(f"ratio engine / typical steps per second: {typical_ratio:.2f}   (target >= 3)")
    print_bits_check()
    if not args.no_dag:
        print_dag_overhead()


if __name__ == "__main__":
    main()
