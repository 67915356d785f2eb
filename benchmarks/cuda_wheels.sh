#!/usr/bin/env bash
# Fill .whl/ (git-excluded) with what benchmarks/cuda_full_study.sh needs on a device machine
# whose image has torch and numpy but not the workflow's other pins, for its Python 3.12:
# snakemake and its requirements as wheels (PuLP left out: the script schedules greedily),
# pyarrow unpacked without Flight, tests and headers (to fit the 64 MiB a call may carry), and
# MNIST as xz. Run from the repository root, after resources/mnist.npz exists (`make smoke`):
#   bash benchmarks/cuda_wheels.sh            # PY312=/path/to/python3.12 if not on PATH
set -euo pipefail
PY312=${PY312:-python3.12}
pin() { sed -n "s/^$1==//p" envs/requirements.txt; }
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
rm -rf .whl && mkdir -p .whl
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >>.git/info/exclude

"$PY312" -m venv "$venv/env"
"$venv/env/bin/pip" install -q "snakemake==$(pin snakemake)" "jsonschema==$(pin jsonschema)"
"$venv/env/bin/pip" freeze | grep -viE '^(numpy|pandas|pulp|python-dateutil|six|tzdata)==' \
    >"$venv/requirements.txt"
"$venv/env/bin/pip" wheel -q --no-deps -r "$venv/requirements.txt" -w .whl

"$venv/env/bin/pip" download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 -d "$venv" "pyarrow==$(pin pyarrow)"
mkdir "$venv/pyarrow" && (cd "$venv/pyarrow" && unzip -q "$venv"/pyarrow-*.whl)
rm -rf "$venv"/pyarrow/pyarrow/{tests,include,src} "$venv"/pyarrow/pyarrow/*flight*
tar -C "$venv/pyarrow" -cf - . | xz -T0 -6 >.whl/pyarrow.tar.xz

xz -T0 -9 -c resources/mnist.npz >.whl/mnist.npz.xz
du -sh .whl
