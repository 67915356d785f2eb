#!/usr/bin/env bash
# ops.py under the reference's caps with MKL's vendor queries answered by a preloaded library:
# workflow/mkl_zen.c (machine.mkl_cpu: zen), and each of its two answers alone.
#   cd reference/cross-checks/cpu-intel-amx-2026-12-02 && bash ops-zen.sh > ops-intel-zen.txt
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
python=${PYTHON:-$repo/.venv/bin/python}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
zen=$(cd "$repo" && "$python" -c 'from workflow.mkl import shim; print(shim())')
echo 'int mkl_serv_intel_cpu_true(void) { return 0; }' > "$scratch/not_intel.c"
echo 'int mkl_serv_cpuiszen(void) { return 1; }' > "$scratch/zen_only.c"
for name in not_intel zen_only; do
    cc -O2 -shared -fPIC "$scratch/$name.c" -o "$scratch/$name.so"
done
export ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2
run() {
    local shown="${*//$scratch/\$scratch}"
    echo "\$ ${shown//$zen/\$(workflow.mkl.shim)}"
    env "$@" "$python" "$here/ops.py"
    echo
}
run MKL_ENABLE_INSTRUCTIONS=AVX2
run MKL_ENABLE_INSTRUCTIONS=AVX2 LD_PRELOAD="$zen"
run MKL_ENABLE_INSTRUCTIONS=SSE4_2 LD_PRELOAD="$zen"
run MKL_ENABLE_INSTRUCTIONS=AVX2 LD_PRELOAD="$scratch/not_intel.so"
run MKL_ENABLE_INSTRUCTIONS=AVX2 LD_PRELOAD="$scratch/zen_only.so"
