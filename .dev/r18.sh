#!/usr/bin/env bash
# Device run r18 (one H200, session 11): uploads staged through page-locked buffers filled on libuv's
# threads (backend/cuda/staged.ts) against page-locking the input (VLC_CUDA_STAGE=0), interleaved, on
# 100M x 128 f16 --anchors 65536 --residual none --gpu 0 (the same bytes as r12: 43e5478d8d4cb2ea),
# then every default but --anchors (int8 residuals: the rows go up twice) once each way; the batched
# sample draw (.dev/probe-draw.mjs); the GPU suite. $OUT/r18/summary.txt.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r18; mkdir -p $W
source .dev/r6-lib.sh
{ nvidia-smi -L; nproc; free -g; } > $W/machine.txt 2>&1
timeout 60 node .dev/probe-draw.mjs 2>&1 | tee -a $W/summary.txt
[ -f /dev/shm/h.npy ] || python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1
KEEP=0
show() { grep -h "engine over 100000000\|training sample\|k-means++ in\|closed in\|quality:\|residual" $W/$1.err | cut -c1-250 | tee -a $W/summary.txt; }
for r in 1 2; do
  export VLC_CUDA_STAGE=1; C s$r 90 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0; show s$r
  export VLC_CUDA_STAGE=0; C l$r 90 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0; show l$r
done
export VLC_CUDA_STAGE=1; C ds 150 /dev/shm/h.npy --anchors 65536 --gpu 0; show ds
export VLC_CUDA_STAGE=0; C dl 150 /dev/shm/h.npy --anchors 65536 --gpu 0; show dl
unset VLC_CUDA_STAGE
rm -f /dev/shm/*.vlc
[ "${SUITE:-1}" = 1 ] && suite 240
