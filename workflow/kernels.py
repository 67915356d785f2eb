"""The training engine's fused CPU kernels for the CNN's two pooling layers (``kernels.c``).

    logits = fused_forward(model, images)   # same function as model(images), up to rounding

PyTorch runs "conv1 -> max-pool -> activation" as separate passes over a 128x32x28x28 map and
its gradient (plus a zero fill), which cost more than conv2's matrix products on a CPU. The C
kernels compute conv1, pooling and activation in one pass that never writes the full map, and
pool conv2's output straight into fc1's input order. conv2 and the linear layers stay PyTorch's.

The C file is compiled once per machine and compiler into a cache folder (``HISTRES_KERNELS``,
default ``~/.cache/histres/kernels``), keyed by the source and the build; a machine without a
C compiler fails here with a message, never falls back silently: PyTorch's ops round
differently, so the choice is the config value ``training.kernels``.
"""

from __future__ import annotations

import ctypes
import hashlib
import platform
import subprocess
from functools import cache
from pathlib import Path

import torch
import torch.nn.functional as F

from workflow.machine.cbuild import build, cache_folder, compiler

SOURCE = Path(__file__).with_suffix(".c")
# IEEE float32 in source order: no fused multiply-add contraction, no fast-math.
FLAGS = ("-O3", "-std=c11", "-shared", "-fPIC", "-ffp-contract=off")


def _machine() -> str:
    """What a -march=native build depends on: the CPU model and its instruction sets."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
        return "\n".join(sorted({ln for ln in lines if ln.startswith(("model name", "flags"))}))
    except OSError:
        return platform.machine() + platform.processor()


@cache
def library() -> ctypes.CDLL:
    cc = compiler(
        "training.kernels: fused",
        "set training.kernels: torch (PyTorch's ops: slower, and results differ from fused "
        "runs at float rounding)",
    )
    version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout
    key = hashlib.sha256(
        "\0".join([SOURCE.read_text(), cc, version, " ".join(FLAGS), _machine()]).encode()
    ).hexdigest()[:16]
    # -march=native is faster and changes no bits (no contraction); some compilers lack it.
    flag_sets = ((*FLAGS, "-march=native"), FLAGS)
    target = build(lambda: cc, SOURCE, cache_folder() / f"histres_kernels-{key}.so", flag_sets)
    lib = ctypes.CDLL(str(target))
    for name in (
        "histres_conv_pool_forward",
        "histres_conv_pool_backward",
        "histres_pool_forward",
        "histres_pool_backward",
    ):
        getattr(lib, name).restype = None
    return lib


def _call(name: str, *args) -> None:
    converted = []
    for arg in args:
        if isinstance(arg, torch.Tensor):
            if not arg.is_contiguous() or arg.device.type != "cpu":
                raise ValueError(f"{name}: arguments must be contiguous CPU tensors")
            converted.append(ctypes.c_void_p(arg.data_ptr()))
        elif isinstance(arg, float):
            converted.append(ctypes.c_float(arg))
        else:
            converted.append(ctypes.c_int(arg) if isinstance(arg, bool) else ctypes.c_int64(arg))
    getattr(library(), name)(*converted)


def _check(x: torch.Tensor) -> None:
    if x.dtype != torch.float32 or x.device.type != "cpu":
        raise ValueError(f"fused kernels take float32 CPU tensors, not {x.dtype} on {x.device}")
    if x.shape[-1] % 2 or x.shape[-2] % 2:
        raise ValueError(f"fused pooling needs even height and width, not {tuple(x.shape)}")


class ConvPool(torch.autograd.Function):
    """act(max_pool2d(conv2d(x, weight, bias, padding=1), 2)), channels-last output."""

    @staticmethod
    def forward(ctx, x, weight, bias, leaky: bool, slope: float):
        _check(x)
        if ctx.needs_input_grad[0]:
            raise ValueError("ConvPool gives no gradient for its input (the images)")
        if weight.shape[2:] != (3, 3):
            raise ValueError(f"ConvPool takes 3x3 kernels, not {tuple(weight.shape[2:])}")
        n, cin, h, w = x.shape
        c = weight.shape[0]
        xp = F.pad(x, (1, 1, 1, 1)).contiguous()
        taps = weight.detach().reshape(c, cin * 9).t().contiguous()
        bias = bias.detach().contiguous()
        y = x.new_empty((n, h // 2, w // 2, c))
        code = torch.empty(y.shape, dtype=torch.uint8)
        _call("histres_conv_pool_forward", xp, n, cin, h, w, taps, bias, c, leaky, slope, y, code)
        ctx.save_for_backward(xp, y, code)
        ctx.args, ctx.weight_shape = (n, cin, h, w, c, leaky, slope), weight.shape
        return y.permute(0, 3, 1, 2)

    @staticmethod
    def backward(ctx, grad):
        xp, y, code = ctx.saved_tensors
        n, cin, h, w, c, leaky, slope = ctx.args
        g = grad.permute(0, 2, 3, 1).contiguous()
        dtaps, dbias = y.new_empty((cin * 9, c)), y.new_empty(c)
        args = (xp, n, cin, h, w, g, y, code, c, leaky, slope, dtaps, dbias)
        _call("histres_conv_pool_backward", *args)
        return None, dtaps.t().reshape(ctx.weight_shape), dbias, None, None


class PoolFlat(torch.autograd.Function):
    """act(max_pool2d(z, 2)).flatten(1) of a channels-last ``z``."""

    @staticmethod
    def forward(ctx, z, leaky: bool, slope: float):
        _check(z)
        n, c, h, w = z.shape
        zl = z.permute(0, 2, 3, 1).contiguous()  # a view when z is channels-last
        y = z.new_empty((n, c * (h // 2) * (w // 2)))
        code = torch.empty((n, h // 2, w // 2, c), dtype=torch.uint8)
        _call("histres_pool_forward", zl, n, h, w, c, leaky, slope, y, code)
        ctx.save_for_backward(y, code)
        ctx.args = (n, h, w, c, leaky, slope)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, code = ctx.saved_tensors
        n, h, w, c, leaky, slope = ctx.args
        dz = y.new_empty((n, h, w, c))
        _call("histres_pool_backward", grad.contiguous(), y, code, n, h, w, c, leaky, slope, dz)
        return dz.permute(0, 3, 1, 2), None, None


def fused_forward(model, x: torch.Tensor) -> torch.Tensor:
    """``model(x)`` for a ``HistoryNet`` on the CPU, through the fused kernels."""
    leaky = model.spec.activation == "leaky_relu"
    slope = float(model.spec.leaky_slope)
    h = ConvPool.apply(x, model.conv1.weight, model.conv1.bias, leaky, slope)
    h = PoolFlat.apply(model.conv2(h), leaky, slope)
    return model.fc2(model.act(model.fc1(h)))
