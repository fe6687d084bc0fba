#!/usr/bin/env bash
# Device run r6-b (2 GPUs, nvidia-h200-x2, after r6-a on the same warm machine): issue 31's sizes
# that fit two GPUs. 50M x 128 f16 (r3-data.py), --anchors 65536, every default, on --gpu 0 and
# --gpu 0,1 twice each (wall, phases and their sum, sha256); 100M x 128 f16 on one GPU, every
# default but --residual none (every phase but reading under 20 s is the goal). Results: $OUT/r6b.tgz.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/r6b; mkdir -p $W $OUT; trap 'tar czf $OUT/r6b.tgz -C $W .' EXIT
T0=$(date +%s)
source .dev/r6-lib.sh; KEEP=0
rm -rf /dev/shm/shards /dev/shm/*.vlc /dev/shm/e.npy
(python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1; echo "100M made after $(( $(date +%s) - T0 )) s" >> $W/data100.log) &
G=$!
timeout 100 python3 .dev/r3-data.py 50000000 /dev/shm/x.npy /dev/shm/xq.npy > $W/data50.log 2>&1; say "50M made rc $? after $(( $(date +%s) - T0 )) s"
X="/dev/shm/x.npy --anchors 65536"
C g1 90 $X --gpu 0; C g2 90 $X --gpu 0,1; C g1b 90 $X --gpu 0; C g2b 90 $X --gpu 0,1
rm -f /dev/shm/x.npy
wait $G; tail -1 $W/data100.log | tee -a $W/summary.txt
C h1 150 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0
say "done after $(( $(date +%s) - T0 )) s"
