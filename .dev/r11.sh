#!/usr/bin/env bash
# Device run r11 (one H200, nvidia-h200): ec's GPU decoder after ec_rotated rebuilds EC_ROWS rows at
# once (each direction value loaded once for all of them), against r4a's 40.1 GB/s along principal
# directions and 238.6 GB/s along the axes (bench/results/2026-11-28-h200-r4a.json: the same command,
# the same sizes); every copy compared with the host's rows bit for bit by the bench; then the GPU
# suite (the several-GPU tests skip on one GPU), or only the files FILES names.
# Usage (repository root): [FILES='test/gpu/ec.test.ts ...'] [TAG=r11b] bash .dev/r11.sh
set -uo pipefail
source .gpu/activate.sh
TAG=${TAG:-r11}; OUT=${OUT:-/tmp/out}; W=/tmp/$TAG; mkdir -p $W $OUT
trap 'tar czf $OUT/$TAG.tgz -C $W .' EXIT
T0=$(date +%s)
source .dev/r6-lib.sh
{ nvidia-smi -L; nproc; free -g; } > $W/machine.txt 2>&1
# VARIANTS: cubins of ec.cu built with other -DEC_ROWS / -DEC_TILE (.dev/ec-vars/ec-rR-tT.cubin), each
# swapped in for build/sm_90/ec.cubin and timed along principal directions (the bench checks the bits).
# Built here (nvcc 13.0) by: nvcc -ptx -arch=compute_80 -O3 -I cuda -DEC_ROWS=R -DEC_TILE=T cuda/ec.cu -o v.ptx
#   && ptxas -arch=sm_90 -O3 v.ptx -o .dev/ec-vars/ec-rR-tT.cubin
for v in ${VARIANTS:-}; do
  cp build/sm_90/ec.cubin /tmp/ec.cubin.kept; cp .dev/ec-vars/ec-$v.cubin build/sm_90/ec.cubin
  timeout 100 node bench/ec-gpu.mjs --n 245760 --repeat 40 --layout rotated --out $W/ec-gpu-rotated-$v.json > $W/ec-rot-$v.log 2>&1
  say "ec-gpu rotated $v rc $? $(python3 -c "import json; d=json.load(open('$W/ec-gpu-rotated-$v.json')); r=d['cases'][0]; print({k: r.get(k) for k in ['n','gpu_ms','gb_per_s','bit_identical_to_host']})" 2>&1 | tail -1)"
  cp /tmp/ec.cubin.kept build/sm_90/ec.cubin
done
for L in rotated axis; do
  [ $L = rotated ] && A="--n 245760 --repeat 40" || A="--n 500000 --repeat 20"
  timeout 200 node bench/ec-gpu.mjs $A --layout $L --out $W/ec-gpu-$L.json > $W/ec-$L.log 2>&1
  say "ec-gpu $L rc $? $(python3 -c "import json; d=json.load(open('$W/ec-gpu-$L.json')); r=d['cases'][0]; print({k: r.get(k) for k in ['n','gpu_ms','gb_per_s','bit_identical_to_host','bytes_per_vector']})" 2>&1 | tail -1)"
done
if [ -n "${FILES:-}" ]; then
  timeout 300 node_modules/.bin/vitest run --config vitest.gpu.config.ts $FILES > $W/gpu-suite.log 2>&1; say "GPU tests ($FILES) rc $?"
  sed 's/\x1b\[[0-9;]*m//g' $W/gpu-suite.log | grep -E "Test Files|Tests |FAIL|×" | head -20 | tee -a $W/summary.txt
else
  left=$(( 570 - ($(date +%s) - T0) )); [ $left -gt 120 ] && suite $left || say "GPU suite not run: $left s left"
fi
say "done after $(( $(date +%s) - T0 )) s"
