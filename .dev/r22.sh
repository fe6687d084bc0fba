#!/usr/bin/env bash
# Device run r22 (one H200, session 11): a large upload's first 60 % page-locked while libuv's
# threads stage the rest (pin.ts uploadLarge + staged.ts) against locking it all (VLC_CUDA_STAGE=0),
# on 100M x 128 f16 --anchors 65536 --residual none --gpu 0: a first run of each kind after the data
# is made, then interleaved pairs. The same bytes (43e5478d8d4cb2ea) expected. $OUT/r22/summary.txt.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r22; mkdir -p $W
source .dev/r6-lib.sh
[ -f /dev/shm/h.npy ] || python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1
KEEP=0
show() { grep -h "engine over 100000000\|closed in" $W/$1.err | cut -c1-260 | tee -a $W/summary.txt; }
for tag in ${RUNS:-l0 s1 l1 s2 l2}; do
  case $tag in s*) export VLC_CUDA_STAGE=1;; l*) export VLC_CUDA_STAGE=0;; esac
  C $tag 90 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0; show $tag
done
unset VLC_CUDA_STAGE
rm -f /dev/shm/*.vlc
[ "${SUITE:-0}" = 1 ] && suite 240
