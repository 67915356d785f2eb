"""glibc settings that keep freed activation buffers in the heap instead of returning them to
the OS every training step (thousands of page faults a step otherwise).

    keep_heap()   # in the process itself; HEAP_ENVIRONMENT for a process about to start

glibc reads the variables when a process starts; ``keep_heap`` sets the same values through
mallopt in a running one (a job, a test), unless it started with them. They change no bits.
"""

from __future__ import annotations

import ctypes
import os

HEAP_ENVIRONMENT = {
    "MALLOC_MMAP_THRESHOLD_": str(1 << 30),
    "MALLOC_TRIM_THRESHOLD_": str((1 << 31) - 1),
    "MALLOC_TOP_PAD_": str(256 << 20),
}
# mallopt's parameter numbers (glibc's malloc.h).
MALLOPT = {"MALLOC_TRIM_THRESHOLD_": -1, "MALLOC_TOP_PAD_": -2, "MALLOC_MMAP_THRESHOLD_": -3}


def keep_heap() -> None:
    if all(os.environ.get(key) == value for key, value in HEAP_ENVIRONMENT.items()):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return  # not glibc: its allocator has no such settings
    for key, value in HEAP_ENVIRONMENT.items():
        libc.mallopt(MALLOPT[key], int(value))
