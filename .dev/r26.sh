#!/usr/bin/env bash
# Device run r26 (one H200, session 12): the GPU suite with this session's kernels and tests (max_abs
# 16 bytes a load; k-means++ rounds through the screen: seeding.ts addMany -> seed_min), then
# 100M x 128 f16 --anchors 65536 --residual none --gpu 0, this tree (w) against main at the
# session's start (x: .dev/base, 7ebcd39's dist, carried), interleaved. The same bytes
# (43e5478d8d4cb2ea) expected. $OUT/keep/summary.txt, the rest in $OUT/keep/r26.tgz.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r26; mkdir -p $W
source .dev/r6-lib.sh
say "commit $(cat .dev/commit 2>/dev/null) + work tree; base $(ls .dev/base/dist/cli.js) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
suite 250
grep -h "k-means++ rounds" $W/gpu-suite.log | tee -a $W/summary.txt
t=$(date +%s); [ -f /dev/shm/h.npy ] || python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1
say "data $(( $(date +%s) - t )) s"
KEEP=0
show() { grep -h "k-means++ in\|engine over 100000000\|closed in" $W/$1.err | cut -c1-300 | tee -a $W/summary.txt; }
for tag in ${RUNS:-x1 w1 x2 w2 w3}; do
  case $tag in x*) VLCBIN=.dev/base/bin/vlc.js;; *) VLCBIN=bin/vlc.js;; esac
  C $tag 90 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0; show $tag
done
rm -f /dev/shm/*.vlc
mkdir -p $OUT/keep && cp $W/summary.txt $OUT/keep/ && tar czf $OUT/keep/r26.tgz -C $OUT r26 && rm -rf $W
