#!/usr/bin/env bash
# Device run r21 (one H200, session 11): 100M x 128 f16 --anchors 65536 --residual none --gpu 0
# (RUNS, default three) with init's rows fetched a round at a time (Engine.rows) and the batched
# sample draw; the same bytes as r12 (43e5478d8d4cb2ea) expected. Then the GPU suite.
# $OUT/r21/summary.txt.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r21; mkdir -p $W
source .dev/r6-lib.sh
{ nvidia-smi -L; nproc; free -g; } > $W/machine.txt 2>&1
[ -f /dev/shm/h.npy ] || python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1
KEEP=0
for r in ${RUNS:-1 2 3}; do
  C h$r 90 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0
  grep -h "engine over 100000000\|training sample\|k-means++ in\|closed in\|quality:" $W/h$r.err | cut -c1-250 | tee -a $W/summary.txt
done
rm -f /dev/shm/*.vlc
[ "${SUITE:-1}" = 1 ] && suite 240
