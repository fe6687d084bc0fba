#!/usr/bin/env bash
# Device run r23 (one H200, session 12): main at the session's start (Engine.rows straight into the
# anchors, moveAnchors via rows, lazy command loading: none of it run on a GPU yet) on
# 100M x 128 f16 --anchors 65536 --residual none --gpu 0, three runs (the first right after the data
# is made), -v saying how much of the input sits on 2 MiB pages when it is page-locked; then the
# GPU suite. The same bytes (43e5478d8d4cb2ea) expected. $OUT/r23/summary.txt.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r23; mkdir -p $W
source .dev/r6-lib.sh
say "commit $(cat .dev/commit 2>/dev/null) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
grep -h . /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag | tee -a $W/summary.txt
t=$(date +%s); [ -f /dev/shm/h.npy ] || python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1
say "data $(( $(date +%s) - t )) s"
KEEP=0
show() { grep -h "engine over 100000000\|k-means++ in\|training sample:\|closed in" $W/$1.err | cut -c1-300 | tee -a $W/summary.txt; }
for tag in ${RUNS:-a1 a2 a3}; do
  C $tag 90 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0; show $tag
done
rm -f /dev/shm/*.vlc
[ "${SUITE:-1}" = 1 ] && suite 240
