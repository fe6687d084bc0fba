#!/usr/bin/env bash
# Device run r37 (one H200, session 13): the whole GPU suite at this tree, then 10,000,000 x 128 f16
# every default --anchors 16384 --gpu 0 (issue 31's 10M size): main at the session start (x: .dev/base,
# 6a33333) against this tree (w), interleaved. $OUT/keep/summary.txt (written as it goes), r37.tgz.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/keep; mkdir -p $W
source .dev/r6-lib.sh
say "commit $(cat .dev/commit 2>/dev/null) + work tree; base $(ls .dev/base/dist/cli.js) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
suite 400
python3 .dev/r3-data.py 10000000 /dev/shm/t.npy /dev/shm/tq.npy > $W/data10.log 2>&1
for tag in x1 w1 x2 w2; do
  case $tag in x*) VLCBIN=.dev/base/bin/vlc.js;; w*) VLCBIN=bin/vlc.js;; esac
  C $tag 60 /dev/shm/t.npy --anchors 16384 --gpu 0
  grep -h "measured\|chose " $W/$tag.err | cut -c1-160 >> $W/summary.txt
  [ $tag != x1 ] && same x1 $tag
done
rm -f /dev/shm/*.vlc
tar czf $OUT/r37.tgz -C $W . && mv $OUT/r37.tgz $W/ && rm -f $W/*.err $W/*.json
