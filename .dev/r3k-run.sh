#!/usr/bin/env bash
# Device run r3k (one H100): the GPU suite after merging the ec GPU decoder (ecgpu) and the lazy
# screen / page-locked uploads; the ec decoder's speed (bench/ec-gpu.mjs, bit identity checked).
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p "$OUT" $W
trap 'cp $W/*.json $OUT/ 2>/dev/null; tar czf $OUT/r3k.tgz -C $W .' EXIT
nvidia-smi -L > $W/gpus.txt; git log -1 --format=%h > $W/commit.txt 2>/dev/null
timeout 240 node_modules/.bin/vitest run --config vitest.gpu.config.ts > $W/gpu-tests.log 2>&1; sed 's/\x1b\[[0-9;]*m//g' $W/gpu-tests.log | grep -E "FAIL|×|Error" | head -20; sed 's/\x1b\[[0-9;]*m//g' $W/gpu-tests.log | tail -6
timeout 150 node bench/ec-gpu.mjs --n 1000000 --layout axis --out $W/ec-gpu-axis.json > $W/ec-axis.log 2>&1; tail -5 $W/ec-axis.log
timeout 120 node bench/ec-gpu.mjs --n 250000 --layout rotated --out $W/ec-gpu-rotated.json > $W/ec-rot.log 2>&1; tail -5 $W/ec-rot.log
