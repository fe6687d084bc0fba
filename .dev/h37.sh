#!/usr/bin/env bash
# Session 11, run h37: decode_pq_projected (pq on principal directions, --pq-dims): GPU suite, and
# `vlc search --device cuda` of 10,000 queries over 1,000,000 vectors for pq and pq --pq-dims 64.
set -uo pipefail
source .gpu/activate.sh
log=$OUT/run.log
nvidia-smi --query-gpu=name --format=csv,noheader | tee -a $log
git rev-parse --short HEAD 2>/dev/null | tee -a $log
timeout 240 node_modules/.bin/vitest run --config vitest.gpu.config.ts > $OUT/gpu-tests.log 2>&1; echo "suite rc $?" | tee -a $log; grep -E "Test Files|Tests " $OUT/gpu-tests.log | tee -a $log
grep -E "✗|×|FAIL|projected" $OUT/gpu-tests.log | head -20 | tee -a $log
timeout 280 node bench/search-gpu.mjs --n 1000000 --d 128 --queries 10000 --residuals pq,pqd64 --out $OUT/search-gpu.json 2>&1 | tail -8 | tee -a $log
