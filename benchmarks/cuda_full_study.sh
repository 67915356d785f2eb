#!/usr/bin/env bash
# The full config's studies on a CUDA GPU machine (config/cuda.yaml), as far as a deadline
# allows, then a reference-style export of whatever finished (README, "Reproducibility").
# Run from the repository root:
#   STUDIES="main noise_floor" DEADLINE=540 bash benchmarks/cuda_full_study.sh
# Needs python3 with torch (CUDA). Packages the machine lacks may come as wheels in .whl/
# (pyarrow as .whl/pyarrow*.tar.xz, an unpacked wheel), and MNIST as .whl/mnist.npz.xz when
# resources/mnist.npz is missing: benchmarks/cuda_wheels.sh prepares them. Writes $OUT/full-cuda.tar.gz (reference/cuda/'s layout) and
# $OUT/snakemake.log. A second call on the same machine resumes (--rerun-incomplete).
# A device machine may get the working tree without its history: pass COMMIT=<sha of the
# commit it is> (written into the command here) so that the export names it.
set -uo pipefail
OUT=${OUT:-/tmp/cuda_full}
DEADLINE=${DEADLINE:-540} # seconds after start by which everything is packed
STUDIES=${STUDIES:-main}
PY=${PYTHON:-python3}
START=$SECONDS
say() { echo "[$((SECONDS - START)) s] $*"; }
mkdir -p "$OUT/pack"

if compgen -G ".whl/*.whl" >/dev/null; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    for archive in .whl/*.tar.xz; do tar -C /tmp/site -xJf "$archive"; done
    export PYTHONPATH=/tmp/site
fi
if [ ! -f resources/mnist.npz ]; then
    mkdir -p resources && xz -T0 -dc .whl/mnist.npz.xz >resources/mnist.npz || exit 1
fi
say "machine: $(nproc) cores; $(lscpu | sed -n 's/^Model name: *//p')"
$PY -c "import torch, numpy, pandas, pyarrow, snakemake; print('torch', torch.__version__, \
torch.cuda.get_device_name(0), 'numpy', numpy.__version__, 'pandas', pandas.__version__, \
'pyarrow', pyarrow.__version__, 'snakemake', snakemake.__version__)" || exit 1

targets=$(for study in $STUDIES; do printf 'results/cuda/summary/%s.csv ' "$study"; done)
budget=$((DEADLINE - (SECONDS - START) - 40))
say "snakemake for at most $budget s: $targets"
# The target comes before --configfile, which would take it for a second config file.
timeout -k 15 "$budget" $PY -m snakemake --scheduler greedy --keep-going --rerun-incomplete \
    --cores "${CORES:-$(nproc)}" $targets --configfile config/cuda.yaml >"$OUT/snakemake.log" 2>&1
say "snakemake: exit $? ; $(grep -c 'Finished job' "$OUT/snakemake.log") jobs finished"
grep -A12 '^Job stats' "$OUT/snakemake.log" | head -14
tail -3 "$OUT/snakemake.log"
$PY -m workflow.reference export --configfile config/cuda.yaml --out "$OUT/pack/cuda" \
    ${COMMIT:+--commit "$COMMIT"} ||
    say "export failed"
tar -C "$OUT/pack" -czf "$OUT/full-cuda.tar.gz" cuda && rm -rf "$OUT/pack"
say "packed $(du -h "$OUT/full-cuda.tar.gz" | cut -f1)"
