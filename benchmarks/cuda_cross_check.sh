#!/usr/bin/env bash
# Cross-checks of the reference results on a machine with a CUDA GPU and many CPU cores, in
# one run of under 10 minutes (README, "Reproducibility"):
#   1. this machine's CPU against reference/smoke, bit for bit: as it is, and with its
#      instruction sets capped to AVX2 (ATen, oneDNN, MKL);
#   2. the small config trained twice on the GPU, side by side: are GPU runs bit-reproducible,
#      and how far are their numbers from the CPU reference's;
#   3. the engine's updates/s on the GPU, 1 to 12 jobs side by side;
#   4. in the time left, the full config's main study on the GPU (partial if time runs out).
# Run from the repository root:  bash benchmarks/cuda_cross_check.sh
# Needs python3 with torch (CUDA) and the workflow's packages, and resources/mnist.npz (or an
# xz copy of it at $MNIST_XZ). Writes $OUT/cross_check.tar.gz (reference-style folders, the
# verification reports, the throughput figures).
set -uo pipefail
OUT=${OUT:-/tmp/cross_check}
DEADLINE=${DEADLINE:-530}  # seconds after start by which everything is packed
PY=${PYTHON:-python3}
REPO=$(pwd)
WORK=${WORK:-/tmp/histres-cross-check}
START=$SECONDS
say() { echo "[$((SECONDS - START)) s] $*"; }
left() { echo $((DEADLINE - (SECONDS - START))); }
mkdir -p "$OUT/pack" "$WORK"

if [ ! -f resources/mnist.npz ]; then
    mkdir -p resources && xz -T0 -dc "${MNIST_XZ:?resources/mnist.npz missing and MNIST_XZ unset}" \
        >resources/mnist.npz || exit 1
fi
say "machine: $(nproc) cores; $(lscpu | sed -n 's/^Model name: *//p')"
say "CPU vector ISA: $(grep -o 'avx512[a-z_0-9]*\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
$PY -c "import torch, numpy, pandas, pyarrow, snakemake; print('torch', torch.__version__, \
'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() \
else '', 'numpy', numpy.__version__, 'pandas', pandas.__version__, 'pyarrow', pyarrow.__version__, \
'snakemake', snakemake.__version__)" || exit 1
command -v cc >/dev/null || say "no C compiler: the CPU checks (fused kernels) will fail"

# A copy of the repository per check, so that the checks run side by side without sharing
# results/ or Snakemake's lock.
workdir() {
    local dir="$WORK/$1"
    mkdir -p "$dir"
    tar -C "$REPO" --exclude=./.whl --exclude=./results --exclude=./.snakemake \
        --exclude=./logs -cf - . | tar -C "$dir" -xf -
    echo "$dir"
}

# 1 and 2 side by side: CPU verifications (3 cores each), two GPU runs (4 cores each).
cpu=$(workdir cpu)
capped=$(workdir cpu-avx2)
gpu1=$(workdir gpu1)
gpu2=$(workdir gpu2)
VERIFY=results/smoke/verify/all/seeds~101,202.csv
say "1. CPU verification against reference/smoke; 2. small config twice on the GPU"
# The CPU's own widest code path (machine.cpu_isa null), and the AVX2 cap of the default config.
printf 'machine:\n  cpu_isa: null\n' >"$cpu/uncapped.yaml"
(cd "$cpu" && timeout 330 $PY -m snakemake --scheduler greedy --keep-going --cores 3 "$VERIFY" --configfile config/smoke.yaml uncapped.yaml >verify.log 2>&1) &
(cd "$capped" && timeout 330 $PY -m snakemake --scheduler greedy --keep-going --cores 3 "$VERIFY" --configfile config/smoke.yaml >verify.log 2>&1) &
for dir in "$gpu1" "$gpu2"; do
    (cd "$dir" && timeout 330 $PY -m snakemake --scheduler greedy --keep-going --cores 4 \
        --configfile config/smoke.yaml config/cuda.yaml \
        >smoke.log 2>&1) &
done
wait
for dir in "$cpu" "$capped"; do
    name=$(basename "$dir")
    cp "$dir/verify.log" "$OUT/pack/verify-$name.log"
    cp "$dir/${VERIFY%.csv}.txt" "$OUT/pack/verify-$name.txt" 2>/dev/null
    cp "$dir/$VERIFY" "$OUT/pack/verify-$name.csv" 2>/dev/null
    say "$name: $(head -c 600 "$OUT/pack/verify-$name.txt" 2>/dev/null || tail -3 "$dir/verify.log")"
done
for dir in "$gpu1" "$gpu2"; do
    name=$(basename "$dir")
    tail -4 "$dir/smoke.log" | sed "s/^/  $name: /"
    cp "$dir/smoke.log" "$OUT/pack/smoke-$name.log"
    (cd "$dir" && $PY -m workflow.reference export --configfile config/smoke.yaml \
        --configfile config/cuda.yaml --out "$OUT/pack/smoke-$name" >/dev/null 2>&1) \
        || say "$name: export failed"
done
$PY - "$OUT/pack" <<'EOF'
import sys
from pathlib import Path
import pandas as pd

pack = Path(sys.argv[1])
def digests(folder):
    path = folder / "checkpoints.csv"
    return pd.read_csv(path) if path.is_file() else None
one, two = digests(pack / "smoke-gpu1"), digests(pack / "smoke-gpu2")
cpu = digests(Path("reference/smoke"))
key = ["protocol", "act", "lr", "optim", "stream", "seed", "order", "segment", "update"]
col = "params_digest"
if one is not None and two is not None:
    both = one.merge(two, on=key, suffixes=("_1", "_2"))
    same = (both[f"{col}_1"] == both[f"{col}_2"]).sum()
    print(f"GPU run 1 vs GPU run 2: {same}/{len(both)} checkpoint digests identical")
    with_cpu = one.merge(cpu, on=key, suffixes=("_1", "_cpu"))
    print(f"GPU run 1 vs CPU reference: {(with_cpu[f'{col}_1'] == with_cpu[f'{col}_cpu']).sum()}"
          f"/{len(with_cpu)} identical (other kernels and device: none expected)")
show = ["endpoint", "metric", "n", "mean", "ci_low", "ci_high"]
metrics = ["h_repr", "disagreement_pct", "acc_ABC_pct", "excess", "h_order", "h_floor"]
for name in ("main", "noise_floor"):
    for label, folder in (("CPU reference", Path("reference/smoke")), ("GPU run 1", pack / "smoke-gpu1")):
        path = folder / "summary" / f"{name}.csv"
        if path.is_file():
            table = pd.read_csv(path)
            table = table[table.metric.isin(metrics)][show]
            print(f"{label}, {name}:\n{table.to_string(index=False, float_format='%.4g')}")
EOF

say "3. engine throughput on the GPU"
[ -n "${SKIP_THROUGHPUT:-}" ] || timeout 120 $PY benchmarks/gpu_throughput.py --updates 1500 --jobs 1 4 8 12 \
    | tee "$OUT/pack/gpu_throughput.txt"

budget=$(($(left) - 45))
if [ "$budget" -gt 60 ]; then
    say "4. full config, main study, on the GPU for at most $budget s"
    full=$(workdir full)
    (cd "$full" && timeout "$budget" $PY -m snakemake --scheduler greedy --keep-going \
        --cores "$(nproc)" results/cuda/summary/main.csv --configfile config/cuda.yaml >full.log 2>&1)
    say "main study: exit $? ; $(grep -c 'Finished job' "$full/full.log") jobs finished"
    tail -3 "$full/full.log"
    cp "$full/full.log" "$OUT/pack/full-cuda.log"
    (cd "$full" && $PY -m workflow.reference export --configfile config/cuda.yaml \
        --out "$OUT/pack/full-cuda" >/dev/null 2>&1) || say "full: export failed"
fi
tar -C "$OUT/pack" -czf "$OUT/cross_check.tar.gz" . && rm -rf "$OUT/pack"
say "packed $(du -h "$OUT/cross_check.tar.gz" | cut -f1)"
