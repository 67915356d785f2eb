#!/bin/bash
# Retrain reference/smoke's seed-101 pair under each instruction-set setting below and write one
# row per setting (how many of the 8 checkpoints match) to verify-smoke-seed101-settings.csv.
# Run from the repository root after `make .venv/installed`. machine.cpu_isa: null lets the
# variables set here decide, instead of the config's cap.
set -u
here=$(dirname "$0")
out=$here/verify-smoke-seed101-settings.csv
nocap=$(mktemp --suffix=.yaml)
printf 'machine:\n  cpu_isa: null\n' > "$nocap"
log='logs/smoke/verify/main/seeds~101.log'
echo "ATEN_CPU_CAPABILITY,ONEDNN_MAX_CPU_ISA,MKL_ENABLE_INSTRUCTIONS,MKL_CBWR,checkpoints_matching,checkpoints" > "$out"
while IFS=";" read -r aten dnnl mkl cbwr; do
  envs=()
  [ -n "$aten" ] && envs+=("ATEN_CPU_CAPABILITY=$aten")
  [ -n "$dnnl" ] && envs+=("ONEDNN_MAX_CPU_ISA=$dnnl")
  [ -n "$mkl" ] && envs+=("MKL_ENABLE_INSTRUCTIONS=$mkl")
  [ -n "$cbwr" ] && envs+=("MKL_CBWR=$cbwr")
  env -u ATEN_CPU_CAPABILITY -u ONEDNN_MAX_CPU_ISA -u MKL_ENABLE_INSTRUCTIONS -u MKL_CBWR \
      "${envs[@]}" .venv/bin/snakemake --cores 2 'results/smoke/verify/main/seeds~101.csv' \
      --configfile config/smoke.yaml "$nocap" > /dev/null 2>&1
  if grep -q "checkpoints differ from the reference" "$log"; then
    read -r differ total < <(grep -oE "[0-9]+ of [0-9]+ checkpoints differ" "$log" | tail -1 \
        | awk '{print $1, $3}')
    matching=$((total - differ))
  else
    read -r matching total < <(grep -oE "[0-9]+/[0-9]+ checkpoints match" "$log" | tail -1 \
        | tr / ' ' | awk '{print $1, $2}')
  fi
  echo "$aten,$dnnl,$mkl,\"$cbwr\",$matching,$total" | tee -a "$out"
done <<'SETTINGS'
;;;
avx2;AVX2;AVX2;
avx2;AVX2;AVX2;AVX2
avx2;AVX2;AVX2;AVX2,STRICT
avx2;AVX2;;COMPATIBLE
avx2;AVX2;;SSE2
avx2;AVX2;SSE4_2;
avx2;AVX2;AVX512;
avx2;AVX2;;AUTO,STRICT
SETTINGS
rm -f "$nocap"
