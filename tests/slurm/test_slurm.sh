#!/usr/bin/env bash
# The small config through profiles/slurm on a real single-node SLURM cluster on loopback.
#   bash tests/slurm/test_slurm.sh        (as root; `make test-slurm`)
# Installs Debian's SLURM and munge if missing, starts the daemons, runs the DAG, checks every
# summary and figure, and stops the daemons whatever happens. HISTRES_KEEP_TREE=<folder> keeps
# the finished tree there.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
snakemake="$repo/.venv/bin/snakemake"
python="$repo/.venv/bin/python"

if ! command -v slurmctld >/dev/null; then
    timeout -k 10 600 apt-get update -qq
    DEBIAN_FRONTEND=noninteractive timeout -k 10 900 apt-get install -y -qq \
        slurm-wlm slurmctld slurmd slurm-client munge >/dev/null
fi

work=$(mktemp -d)
trap 'bash "$repo/tests/slurm/cluster.sh" stop; rm -rf "$work"' EXIT
timeout -k 10 180 bash "$repo/tests/slurm/cluster.sh" start
for name in Snakefile config.yaml config envs rules workflow profiles; do
    cp -r "$repo/$name" "$work/"
done
cd "$work"
# Account and partition from the environment keep the profile's memory and runtime (a
# --default-resources option would replace them): a dry run shows every job's resources.
HISTRES_SLURM_ACCOUNT=myproject HISTRES_SLURM_PARTITION=cpu "$snakemake" -n \
    --profile profiles/slurm results/smoke/summary/main.csv --configfile config/smoke.yaml > dry.log 2>&1
resources=$(grep -c "resources:" dry.log)
complete=$(grep "resources:" dry.log | grep "slurm_account=myproject" \
    | grep "slurm_partition=cpu" | grep "mem_mb=" | grep -c "runtime=")
[ "$resources" -gt 0 ] && [ "$resources" -eq "$complete" ] \
    || { echo "profile resources lost: $complete of $resources jobs complete"; exit 1; }
timeout -k 30 2400 "$snakemake" --profile profiles/slurm --configfile config/smoke.yaml \
    --seconds-between-status-checks 3 \
    > slurm-run.log 2>&1 || { tail -50 slurm-run.log; exit 1; }

failed=0
# Every study and figure the registry names (workflow.registry).
studies=$("$python" -c "from workflow import registry; print(*registry.NAMES)")
expected=$("$python" -c "from workflow import registry; print(sum(map(len, (s.figures for s in registry.STUDIES))))")
for study in $studies; do
    [ -s "results/smoke/summary/$study.csv" ] || { echo "missing results/smoke/summary/$study.csv"; failed=1; }
done
figures=$(ls results/smoke/figures/*.pdf | wc -l)
[ "$figures" -eq "$expected" ] || { echo "expected $expected figures, found $figures"; failed=1; }
grep -q "slurm" .snakemake/log/*.log || { echo "no job went through SLURM"; failed=1; }
if [ "$failed" -ne 0 ]; then
    echo "0 passed, 1 failed"
    exit 1
fi
# .ci/run hands the finished tree to the workflow tests (HISTRES_SMOKE_TREE, tests/support/trees.py),
# which check it instead of running the small config a second time.
if [ -n "${HISTRES_KEEP_TREE:-}" ]; then
    mkdir -p "$(dirname "$HISTRES_KEEP_TREE")"
    mv "$work" "$HISTRES_KEEP_TREE"
fi
echo "1 passed, 0 failed"
