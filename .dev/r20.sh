#!/usr/bin/env bash
# Device run r20 (one H200, session 11): page locks released at close or left to the process's exit
# (.dev/probe-exit.mjs), each process timed from outside, interleaved. $OUT/r20/summary.txt.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r20; mkdir -p $W
for r in 1 2; do for mode in close exit; do
  t0=$(date +%s%N); node .dev/probe-exit.mjs $mode 2>&1 | tee -a $W/summary.txt; t1=$(date +%s%N)
  echo "$mode: process ended at $((t1/1000000)), whole process $(( (t1-t0)/1000000 )) ms" | tee -a $W/summary.txt
done; done
