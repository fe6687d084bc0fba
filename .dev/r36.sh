#!/usr/bin/env bash
# Device run r36 (one H200, session 13): the whole GPU suite at this tree, then 50M x 128 f16 every
# default --anchors 65536 --gpu 0: main at the session start (x: .dev/base, 6a33333) against this tree
# (w: also the whole payload's codes downloaded into their own locked pages), interleaved. $OUT/keep/summary.txt, the rest in r36.tgz.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r36; mkdir -p $W $OUT/keep
source .dev/r6-lib.sh
say "commit $(cat .dev/commit 2>/dev/null) + work tree; base $(ls .dev/base/dist/cli.js) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
suite 400
python3 .dev/r3-data.py 50000000 /dev/shm/f.npy /dev/shm/fq.npy > $W/data50.log 2>&1
show() { grep -h "pq residuals\|written in\|residuals of 50000000\|closed in" $W/$1.err | cut -c1-200 | tee -a $W/summary.txt; }
for tag in x1 w1 x2 w2; do
  case $tag in x*) VLCBIN=.dev/base/bin/vlc.js;; w*) VLCBIN=bin/vlc.js;; esac
  C $tag 120 /dev/shm/f.npy --anchors 65536 --gpu 0; show $tag
  [ $tag != x1 ] && same x1 $tag
done
rm -f /dev/shm/*.vlc
cp $W/gpu-suite.log $OUT/keep/; cp $W/summary.txt $OUT/keep/ && tar czf $OUT/keep/r36.tgz -C $OUT r36 && rm -rf $W
