#!/usr/bin/env bash
# Device run r19 (one H200, session 11): the staged-upload probe (.dev/probe-stage.mjs), then
# 100M x 128 f16 --anchors 65536 --residual none --gpu 0 staged (event polled, not waited on)
# and page-locked (VLC_CUDA_STAGE=0), interleaved. $OUT/r19/summary.txt.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r19; mkdir -p $W
source .dev/r6-lib.sh
timeout 150 node .dev/probe-stage.mjs 2>&1 | tee -a $W/summary.txt
[ "${RUNS:-1}" = 0 ] && exit 0
[ -f /dev/shm/h.npy ] || python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1
KEEP=0
show() { grep -h "engine over 100000000\|training sample\|closed in" $W/$1.err | cut -c1-250 | tee -a $W/summary.txt; }
for r in ${RUNS:-1}; do
  export VLC_CUDA_STAGE=1; C s$r 90 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0; show s$r
  export VLC_CUDA_STAGE=0; C l$r 90 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0; show l$r
done
