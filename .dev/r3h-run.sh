#!/usr/bin/env bash
# Device run r3h: the GPU suite on main (after the ip fix, the stream and ec merges), and how fast
# host memory is pinned and copied (pin-bench.py), before changing vlc's uploads.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p "$OUT" $W
trap 'tar czf $OUT/r3h.tgz -C $W .' EXIT
nvidia-smi -L > $W/gpus.txt; git log -1 --format=%h > $W/commit.txt 2>/dev/null
timeout 300 node_modules/.bin/vitest run --config vitest.gpu.config.ts > $W/gpu-tests.log 2>&1; sed 's/\x1b\[[0-9;]*m//g' $W/gpu-tests.log | grep -E "FAIL|✗|×" | head -20; tail -6 $W/gpu-tests.log
python3 .dev/pin-bench.py 12.8 | tee $W/pin.json
