#!/usr/bin/env bash
# Device run r25 (one H200, session 12): the host's page locks unlocked on a libuv thread from the
# end of residual encoding, while quality is measured and the file written (Backend.uploadsOver,
# pin.ts unlockOffThread; r24 began them at the write) against main at the session's
# start (.dev/base: 7ebcd39's dist, carried), interleaved, on 100M x 128 f16 --anchors 65536
# --residual none --gpu 0; then one run under node --cpu-prof (the host's share of init, choosing,
# quality and writing). The same bytes (43e5478d8d4cb2ea) expected. $OUT/r25/summary.txt (the rest in $OUT/r25.tgz).
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r25; mkdir -p $W
source .dev/r6-lib.sh
say "commit $(cat .dev/commit 2>/dev/null) + work tree; base $(ls .dev/base/dist/cli.js) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
t=$(date +%s); [ -f /dev/shm/h.npy ] || python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1
say "data $(( $(date +%s) - t )) s"
KEEP=0
show() { grep -h "quality:\|written in\|closed in" $W/$1.err | cut -c1-300 | tee -a $W/summary.txt; }
for tag in ${RUNS:-x1 z1 x2 z2 x3 z3}; do
  case $tag in x*) VLCBIN=.dev/base/bin/vlc.js;; *) VLCBIN=bin/vlc.js;; esac
  C $tag 90 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0; show $tag
done
VLCBIN=bin/vlc.js NODE_ARGS="--cpu-prof --cpu-prof-dir=$W/prof" C p1 120 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0; show p1
ls -la $W/prof | tail -2
rm -f /dev/shm/*.vlc
mkdir -p $OUT/keep && cp $W/summary.txt $OUT/keep/ && tar czf $OUT/keep/r25.tgz -C $OUT r25 && rm -rf $W
