"""glibc settings that keep freed activation buffers in the heap instead of returning them to
the OS every training step (thousands of page faults a step otherwise).

Torch-free and alone in its module: the workflow sets them for every job when it is parsed
(rules/common.smk), and training applies them to processes started any other way, so this is
the only code both hash.
"""

HEAP_ENVIRONMENT = {
    "MALLOC_MMAP_THRESHOLD_": str(1 << 30),
    "MALLOC_TRIM_THRESHOLD_": str((1 << 31) - 1),
    "MALLOC_TOP_PAD_": str(256 << 20),
}
