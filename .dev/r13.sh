#!/usr/bin/env bash
# Device run r13 (one H200, session 10): 100M x 128 f16 (.dev/r3-data.py), --anchors 65536
# --residual none --gpu 0, the engine's upload in the background while init runs (openForSample)
# against VLC_CUDA_OVERLAP=0 (the upload awaited, as r12), interleaved twice: the same bytes
# (r12's sha 43e5478d8d4cb2ea), every phase but reading. Then the GPU suite. $OUT/r13/summary.txt.
# Needs .dev/tried/overlap-upload.diff applied (main has no VLC_CUDA_OVERLAP: vlc refuses the variable).
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r13${TAG:-}; mkdir -p $W
source .dev/r6-lib.sh
{ nvidia-smi -L; nproc; free -g; } > $W/machine.txt 2>&1
[ -f /dev/shm/h.npy ] || python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1
KEEP=0
for r in 1 2; do
  C on$r 90 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0
  VLC_CUDA_OVERLAP=0 C off$r 90 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0
done
grep -h "engine over\|k-means\|iter=0 " $W/on1.err $W/off1.err | cut -c1-160 | tee -a $W/summary.txt
[ "${SUITE:-1}" = 1 ] && suite 200
