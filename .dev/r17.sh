#!/usr/bin/env bash
# Device run r17 (one H200, session 11): the training sample's draw on this machine's cores
# (.dev/probe-draw.mjs), then 100M x 128 f16 --anchors 65536 --residual none --gpu 0 (RUNS) with the
# draw split over threads (api/sample-draw.ts) and init's new -v line. $OUT/r17/summary.txt.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r17; mkdir -p $W
source .dev/r6-lib.sh
{ nvidia-smi -L; nproc; lscpu | grep -E "Model name|L2|L3"; } > $W/machine.txt 2>&1
timeout 120 node .dev/probe-draw.mjs 2>&1 | tee -a $W/summary.txt
[ -f /dev/shm/h.npy ] || python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1
KEEP=0
for r in ${RUNS:-1 2}; do
  C h$r 90 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0
  grep -h "engine over 100000000\|training sample\|k-means++ in\|closed in\|quality:" $W/h$r.err | cut -c1-250 | tee -a $W/summary.txt
done
