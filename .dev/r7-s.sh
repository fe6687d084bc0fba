#!/usr/bin/env bash
# Device run r7-s (one H200, the session's last device seconds): the GPU suite on main after the
# ecenc merge, while 100M x 128 f16 is made; then 100M --anchors 65536 --residual none on --gpu 0
# (issue 31: every phase but reading under 20 s; the page locks' final placement, 179c464, unmeasured
# before). Results: $OUT/r7s.tgz (written as it goes: a run cut short still returns what it had).
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r7s; mkdir -p $W
source .dev/r6-lib.sh
{ nvidia-smi -L; nproc; free -g; } > $W/machine.txt 2>&1
(python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1) &
G=$!
suite 170
wait $G
KEEP=0
C h1 60 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0
C h2 60 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0
