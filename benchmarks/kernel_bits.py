"""Bit-for-bit check and timing of workflow/kernels.c against an earlier version of it.

    .venv/bin/python benchmarks/kernel_bits.py                  # against git HEAD's kernels.c
    .venv/bin/python benchmarks/kernel_bits.py --old OLD.c --new NEW.c --trials 400

Both sources are compiled here (the flags of workflow/kernels.py, with -march=native) into a
temporary folder and called through ctypes on identical inputs; every output (y, code, dwt,
db, dz and the pool's NCHW y) must agree in every bit. The outputs are first filled with the
same junk, so an element one version leaves unwritten shows up too. Inputs: random shapes
(odd batch sizes, channel counts off the lane width, small even maps), data that is normal,
small integers (exact ties, signed zeros) or sprinkled with NaN, +-inf and -0.0, with ReLU
and LeakyReLU (0.01 and random slopes); then the training shapes (conv1: 128 x 1 x 28 x 28
-> 32 channels; pool: 128 x 64 x 14 x 14), which are also timed, old and new interleaved,
single-threaded, as the median of repetitions.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workflow.kernels import FLAGS  # noqa: E402

I64, INT, F32, PTR = ctypes.c_int64, ctypes.c_int, ctypes.c_float, ctypes.c_void_p
SIGNATURES = {
    "histres_conv_pool_forward": [PTR, I64, I64, I64, I64, PTR, PTR, I64, INT, F32, PTR, PTR],
    "histres_conv_pool_backward": [PTR, I64, I64, I64, I64, PTR, PTR, PTR, I64, INT, F32]
    + [PTR, PTR],
    "histres_pool_forward": [PTR, I64, I64, I64, I64, INT, F32, PTR, PTR],
    "histres_pool_backward": [PTR, PTR, PTR, I64, I64, I64, I64, INT, F32, PTR],
}
KINDS = ("normal", "ties", "special", "nans")


class Kernels:
    """One build of a kernels.c, with the four entry points taking tensors."""

    def __init__(self, source: Path, folder: Path, name: str, march=("-march=native",)):
        target = folder / f"{name}.so"
        cc = os.environ.get("CC") or "cc"
        command = [cc, *FLAGS, *march, str(source), "-o", str(target)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr}")
        self.lib = ctypes.CDLL(str(target))
        for fn, argtypes in SIGNATURES.items():
            getattr(self.lib, fn).argtypes = argtypes
            getattr(self.lib, fn).restype = None

    def call(self, fn: str, *args) -> None:
        converted = [a.data_ptr() if isinstance(a, torch.Tensor) else a for a in args]
        getattr(self.lib, fn)(*converted)


def junk(shape, dtype=torch.float32) -> torch.Tensor:
    """Fixed garbage bits, the same for both versions."""
    size = torch.Size(shape).numel() * torch.empty((), dtype=dtype).element_size()
    data = torch.arange(size, dtype=torch.int64).mul_(2654435761).remainder_(251)
    return data.to(torch.uint8).view(dtype).reshape(shape)


def data(shape, kind: str, gen: torch.Generator) -> torch.Tensor:
    """Normal values, small integers (ties, zeros of both signs), or normal with specials:
    5% of NaN, +-inf, +-0.0 ("special"), or 30% ("nans": where two NaNs meet in one sum)."""
    if kind == "ties":
        x = torch.randint(-2, 3, shape, generator=gen).float()
        return torch.where(torch.rand(shape, generator=gen) < 0.2, -x, x)  # -0.0 too
    x = torch.randn(shape, generator=gen)
    if kind in ("special", "nans"):
        specials = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0])
        pick = torch.randint(0, len(specials), shape, generator=gen)
        rate = 0.05 if kind == "special" else 0.3
        x = torch.where(torch.rand(shape, generator=gen) < rate, specials[pick], x)
    return x.contiguous()


def conv_case(n, cin, h, w, c, kind, gen, border=True):
    xp = data((n, cin, h + 2, w + 2), kind, gen)
    if not border:  # what F.pad gives the kernels in training
        xp[:, :, 0], xp[:, :, -1], xp[:, :, :, 0], xp[:, :, :, -1] = 0, 0, 0, 0
    wt, bias = data((cin * 9, c), kind, gen), data((c,), kind, gen)
    g = data((n, h // 2, w // 2, c), kind, gen)
    return xp, wt, bias, g


def conv_forward(k: Kernels, xp, wt, bias, c, act, out=None):
    n, cin, hp, wp = xp.shape
    shape = (n, (hp - 2) // 2, (wp - 2) // 2, c)
    y, code = out or (junk(shape), junk(shape, torch.uint8))
    k.call("histres_conv_pool_forward", xp, n, cin, hp - 2, wp - 2, wt, bias, c, *act, y, code)
    return y, code


def conv_backward(k: Kernels, xp, g, y, code, act, out=None):
    n, cin, hp, wp = xp.shape
    c = g.shape[-1]
    dwt, db = out or (junk((cin * 9, c)), junk((c,)))
    args = (xp, n, cin, hp - 2, wp - 2, g, y, code, c, *act, dwt, db)
    k.call("histres_conv_pool_backward", *args)
    return dwt, db


def pool_forward(k: Kernels, z, act, out=None):
    n, h, w, c = z.shape
    y, code = out or (junk((n, c * (h // 2) * (w // 2))), junk((n, h // 2, w // 2, c), torch.uint8))
    k.call("histres_pool_forward", z, n, h, w, c, *act, y, code)
    return y, code


def pool_backward(k: Kernels, g, y, code, act, out=None):
    n, ho, wo, c = code.shape
    (dz,) = out or (junk((n, 2 * ho, 2 * wo, c)),)
    k.call("histres_pool_backward", g, y, code, n, 2 * ho, 2 * wo, c, *act, dz)
    return (dz,)


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.equal(a.view(torch.uint8), b.view(torch.uint8))


def nan_payload_only(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether a and b differ only in elements that are NaN in both (sign or payload)."""
    if a.shape != b.shape or a.dtype != torch.float32:
        return False
    differ = a.view(torch.int32) != b.view(torch.int32)
    return not (differ & ~(a.isnan() & b.isnan())).any()


def difference(a: torch.Tensor, b: torch.Tensor) -> str:
    if a.shape != b.shape:
        return f"shapes {tuple(a.shape)} and {tuple(b.shape)}"
    differ = a.view(torch.uint8) != b.view(torch.uint8) if a.dtype == torch.uint8 else None
    if differ is None:
        differ = a.view(torch.int32) != b.view(torch.int32)
        nans = int((differ & a.isnan() & b.isnan()).sum())
        return f"{int(differ.sum())} elements differ, {nans} of them NaN in both"
    return f"{int(differ.sum())} elements differ"


def any_code(shape, gen: torch.Generator) -> torch.Tensor:
    """Window codes 0..3, and 5% of other bytes (which the forward never writes)."""
    code = torch.randint(0, 4, shape, generator=gen, dtype=torch.uint8)
    other = torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8)
    return torch.where(torch.rand(shape, generator=gen) < 0.05, other, code)


class Checker:
    """Runs two builds on each case; counts per kernel the cases whose outputs are
    bit-identical, differ only in NaN bits (both NaN), or differ otherwise."""

    def __init__(self, old: Kernels, new: Kernels):
        self.old, self.new = old, new
        names = ("conv forward", "conv backward", "pool forward", "pool backward")
        self.counts = {name: {"cases": 0, "identical": 0, "NaN bits only": 0} for name in names}
        self.shapes = {name: set() for name in names}
        self.failures: list[str] = []  # outputs that differ in more than NaN bits
        self.nan_examples: list[str] = []

    def compare(self, name: str, fn, *args, label: str):
        outs_old, outs_new = fn(self.old, *args), fn(self.new, *args)
        count = self.counts[name]
        count["cases"] += 1
        pairs = list(zip(outs_old, outs_new, strict=True))
        if all(same_bits(a, b) for a, b in pairs):
            count["identical"] += 1
        for index, (a, b) in enumerate(pairs):
            if same_bits(a, b):
                continue
            line = f"{name} output {index}: {label}: {difference(a, b)}"
            (self.nan_examples if nan_payload_only(a, b) else self.failures).append(line)
        if all(same_bits(a, b) or nan_payload_only(a, b) for a, b in pairs):
            count["NaN bits only"] += not all(same_bits(a, b) for a, b in pairs)
        return outs_old

    def conv(self, shape, kind, act, gen, border=True):
        n, cin, h, w, c = shape
        xp, wt, bias, g = conv_case(n, cin, h, w, c, kind, gen, border)
        label = f"n={n} cin={cin} {h}x{w} c={c} {kind} act={act}"
        self.shapes["conv forward"].add(shape)
        self.shapes["conv backward"].add(shape)
        y, code = self.compare("conv forward", conv_forward, xp, wt, bias, c, act, label=label)
        self.compare("conv backward", conv_backward, xp, g, y, code, act, label=label)
        # Outputs that are not the forward's own: signs, NaN, any code byte.
        y2 = data(y.shape, kind, gen)
        code2 = any_code(code.shape, gen)
        self.compare("conv backward", conv_backward, xp, g, y2, code2, act, label=label + " (y2)")

    def pool(self, shape, kind, act, gen):
        n, h, w, c = shape
        z = data(shape, kind, gen)
        label = f"n={n} {h}x{w} c={c} {kind} act={act}"
        self.shapes["pool forward"].add(shape)
        self.shapes["pool backward"].add(shape)
        y, code = self.compare("pool forward", pool_forward, z, act, label=label)
        g = data(y.shape, kind, gen)
        self.compare("pool backward", pool_backward, g, y, code, act, label=label)
        y2 = data(y.shape, kind, gen)
        code2 = any_code(code.shape, gen)
        self.compare("pool backward", pool_backward, g, y2, code2, act, label=label + " (y2)")

    def report(self, title: str) -> None:
        print(title)
        for name, count in self.counts.items():
            counts = ", ".join(f"{v} {k}" for k, v in count.items())
            print(f"  {name:14s}: {len(self.shapes[name])} shapes, {counts}")
        for lines, what in ((self.failures, "DIFFER"), (self.nan_examples, "NaN bits only")):
            if lines:
                print(f"  {len(lines)} outputs {what}, e.g.:")
                print("\n".join("    " + line for line in lines[:6]))


def activation(gen: torch.Generator):
    """(leaky, slope): ReLU (slope unused), LeakyReLU 0.01, or a random slope in [-2, 2)."""
    choice = int(torch.randint(0, 4, (), generator=gen))
    slope = float(torch.rand((), generator=gen) * 4 - 2)
    return [(0, 0.01), (0, slope), (1, 0.01), (1, slope)][choice]


def check(checker: Checker, trials: int, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)

    def one(options):
        return options[int(torch.randint(0, len(options), (), generator=gen))]

    sizes, channels = (2, 4, 6, 8, 10, 14, 28), (1, 2, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64)
    for trial in range(trials):
        kind, act = KINDS[trial % len(KINDS)], activation(gen)
        n, h, w, c = one((1, 2, 3, 7)), one(sizes), one(sizes), one(channels)
        checker.conv((n, one((1, 1, 2, 3)), h, w, c), kind, act, gen, border=bool(trial % 2))
        checker.pool((n, h, w, c), kind, act, gen)
    for kind in KINDS:  # the training shapes, every activation
        for act in ((0, 0.01), (1, 0.01), activation(gen)):
            checker.conv((128, 1, 28, 28, 32), kind, act, gen, border=False)
            checker.pool((128, 14, 14, 64), kind, act, gen)


def clock(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - start) * 1e3


def timings(old: Kernels, new: Kernels, reps: int) -> None:
    """Median ms per call at the training shapes, old and new interleaved.

    The outputs are allocated once (touched before timing), so only the kernels are timed."""
    gen = torch.Generator().manual_seed(1)
    act = (1, 0.01)
    xp, wt, bias, g = conv_case(128, 1, 28, 28, 32, "normal", gen, border=False)
    y, code = conv_forward(old, xp, wt, bias, 32, act)
    z = data((128, 14, 14, 64), "normal", gen)
    py, pcode = pool_forward(old, z, act)
    pg = data(py.shape, "normal", gen)
    outs = [
        (torch.zeros_like(y), torch.zeros_like(code)),
        (torch.zeros_like(wt), torch.zeros_like(bias)),
        (torch.zeros_like(py), torch.zeros_like(pcode)),
        (torch.zeros_like(z),),
    ]
    cases = {
        "conv forward": lambda k: conv_forward(k, xp, wt, bias, 32, act, outs[0]),
        "conv backward": lambda k: conv_backward(k, xp, g, y, code, act, outs[1]),
        "pool forward": lambda k: pool_forward(k, z, act, outs[2]),
        "pool backward": lambda k: pool_backward(k, pg, py, pcode, act, outs[3]),
    }
    print(f"timings (ms per call, median of {reps}, old and new interleaved):")
    for name, fn in cases.items():
        times = {old: [], new: []}
        for _ in range(reps):
            for k in (old, new):
                times[k].append(clock(fn, k))
        a, b = statistics.median(times[old]), statistics.median(times[new])
        print(f"  {name:14s} old {a:7.2f}  new {b:7.2f}  speed-up {a / b:5.2f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, help="old kernels.c (default: git HEAD's)")
    parser.add_argument("--new", type=Path, default=REPO / "workflow/kernels.c")
    parser.add_argument("--trials", type=int, default=300)
    parser.add_argument("--reps", type=int, default=15, help="timing repetitions (0: none)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-check", action="store_true", help="timings only")
    parser.add_argument("--strict", action="store_true", help="fail on NaN bits too")
    parser.add_argument(
        "--no-baseline", action="store_true", help="skip old (-march=native) vs old (without)"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        old_source = args.old
        if old_source is None:
            old_source = folder / "old.c"
            git = ["git", "-C", str(REPO), "show", "HEAD:workflow/kernels.c"]
            old_source.write_bytes(subprocess.run(git, check=True, capture_output=True).stdout)
        old, new = Kernels(old_source, folder, "old"), Kernels(args.new, folder, "new")
        failed = False
        if not args.no_check:
            checker = Checker(old, new)
            check(checker, args.trials, args.seed)
            checker.report(f"old vs new ({args.trials} random trials + training shapes):")
            failed = bool(checker.failures or (args.strict and checker.nan_examples))
            print("FAILED" if failed else "no differences outside NaN bits")
            if not args.no_baseline:
                # Which NaN comes out of a sum or product of two NaNs is the compiler's choice
                # of operand order: the same old source, built without -march=native.
                generic = Kernels(old_source, folder, "old-generic", march=())
                baseline = Checker(old, generic)
                check(baseline, args.trials, args.seed)
                baseline.report("baseline, old vs old built without -march=native (same cases):")
        if args.reps:
            timings(old, new, args.reps)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
